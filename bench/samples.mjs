// Seeded text samples of the four kinds a reasoning log holds, for the token benchmark.
export { seeded } from "../www/simulate.js";

const pick = (rand, list) => list[Math.floor(rand() * list.length)];
const int = (rand, lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

const SENTENCES = [
  "The analysis shows that the second approach converges faster because it reuses the intermediate results.",
  "I will first check whether the totals match the quarterly report before changing anything else.",
  "This suggests that the discrepancy comes from duplicated orders rather than from the currency conversion.",
  "After grouping by region, the northern stores account for most of the growth in the last two months.",
  "Before drawing any conclusion, it is worth confirming that the date range covers the whole fiscal year.",
  "The previous attempt failed because the function expected an array, but the loader returned an iterator.",
  "A simpler explanation is that returns were recorded as negative sales and then filtered out by mistake.",
  "Next, I will compare the cleaned dataset with the reference figures and note every difference.",
  "The customer segments behave very differently, so a single average would hide the interesting pattern.",
  "It turns out that the timestamps were stored in local time, which shifts some events into the next day.",
  "We should keep the final version of the aggregation code and discard the earlier experiments.",
  "The result looks plausible, although the variance between weeks is larger than I expected.",
];

const WORDS = ["total", "region", "amount", "orders", "rows", "filter", "group", "value", "result", "count", "items", "report"];

export function prose(rand) {
  const out = [];
  for (let p = 0; p < int(rand, 3, 6); p++) {
    const paragraph = [];
    for (let s = 0; s < int(rand, 3, 6); s++) paragraph.push(pick(rand, SENTENCES));
    out.push(paragraph.join(" "));
  }
  return out.join("\n\n");
}

export function code(rand) {
  const out = [];
  for (let f = 0; f < int(rand, 3, 6); f++) {
    const name = `${pick(rand, WORDS)}${pick(rand, WORDS).replace(/^./, (c) => c.toUpperCase())}`;
    out.push(
      `async function ${name}(data, options = {}) {\n` +
        `  const { limit = ${int(rand, 10, 500)}, field = "${pick(rand, WORDS)}" } = options;\n` +
        `  const rows = await data.load("${pick(rand, WORDS)}.csv");\n` +
        `  const result = {};\n` +
        `  for (const row of rows.slice(0, limit)) {\n` +
        `    if (!row[field]) continue;\n` +
        `    result[row.${pick(rand, WORDS)}] = (result[row.${pick(rand, WORDS)}] ?? 0) + Number(row[field]);\n` +
        `  }\n` +
        `  console.log(\`${name}: \${Object.keys(result).length} groups\`);\n` +
        `  return Object.entries(result).sort((a, b) => b[1] - a[1]);\n` +
        `}\n`,
    );
  }
  return out.join("\n");
}

export function markdown(rand) {
  const out = [`## ${pick(rand, SENTENCES).slice(0, 40)}`];
  for (let i = 0; i < int(rand, 6, 12); i++) {
    const host = pick(rand, ["docs.example.com", "github.com/org/repo", "data.gov.uk", "en.wikipedia.org/wiki"]);
    out.push(
      `- **${pick(rand, WORDS)}**: [${pick(rand, WORDS)} ${pick(rand, WORDS)}](https://${host}/${pick(rand, WORDS)}-${int(rand, 1, 999)}) — ${pick(rand, SENTENCES).slice(0, int(rand, 30, 90))}`,
    );
  }
  out.push("", "| region | total | share |", "| --- | ---: | ---: |");
  for (let i = 0; i < int(rand, 3, 6); i++) out.push(`| ${pick(rand, ["north", "south", "east", "west"])} | ${int(rand, 1000, 999999)} | ${(rand() * 100).toFixed(1)}% |`);
  return out.join("\n");
}

export function logs(rand) {
  const out = [];
  let t = Date.UTC(2026, 10, 22, 18, 0, 0) + int(rand, 0, 1e7);
  for (let i = 0; i < int(rand, 25, 50); i++) {
    t += int(rand, 5, 5000);
    const id = `exec_${t.toString(36)}_${Math.floor(rand() * 36 ** 8).toString(36)}`;
    out.push(
      `${new Date(t).toISOString()} ${pick(rand, ["INFO", "WARN", "DEBUG"])} ${id} ${pick(rand, ["ok", "retry", "done"])} ` +
        `rows=${int(rand, 1, 99999)} ms=${int(rand, 1, 2000)} mem=${(rand() * 512).toFixed(2)}MB hash=${Math.floor(rand() * 2 ** 32).toString(16)}`,
    );
  }
  return out.join("\n");
}

// Reasoning in Chinese, Japanese or Korean (one language a sample), with the figures a log
// holds; written for this benchmark, not taken from any corpus.
const ZH = [
  "分析表明，第二种方法收敛得更快，因为它重复使用了中间结果。",
  "在修改任何内容之前，我会先检查总数是否与季度报告一致。",
  "这说明差异来自重复的订单，而不是货币换算。",
  "按地区分组后，北方门店贡献了最近两个月的大部分增长。",
  "上一次尝试失败了，因为函数需要一个数组，但加载器返回了一个迭代器。",
  "更简单的解释是，退货被记录为负销售额，然后被错误地过滤掉了。",
  "接下来，我会把清理后的数据集与参考数字进行比较，并记录每一个差异。",
  "结果看起来合理，尽管各周之间的方差比我预期的要大。",
  "时间戳是以本地时间存储的，这会把一些事件移到第二天。",
  "我们应该保留聚合代码的最终版本，并放弃之前的实验。",
];
const JA = [
  "分析の結果、二番目の方法は中間結果を再利用するため、より速く収束することが分かりました。",
  "何かを変更する前に、まず合計が四半期報告書と一致しているかを確認します。",
  "これは、差異が通貨換算ではなく重複した注文から来ていることを示唆しています。",
  "地域ごとにグループ化すると、北部の店舗が直近二か月の成長の大半を占めています。",
  "前回の試みは、関数が配列を期待していたのにローダーがイテレーターを返したため失敗しました。",
  "もっと単純な説明は、返品がマイナスの売上として記録され、誤ってフィルタされたというものです。",
  "次に、クリーニングしたデータセットを参照値と比較し、すべての違いを記録します。",
  "結果はもっともらしく見えますが、週ごとのばらつきは予想より大きいです。",
  "タイムスタンプがローカル時間で保存されていたため、一部のイベントが翌日にずれていました。",
  "集計コードの最終版を残し、以前の実験は破棄するべきです。",
];
const KO = [
  "분석 결과 두 번째 방법이 중간 결과를 재사용하기 때문에 더 빨리 수렴하는 것으로 나타났습니다.",
  "무엇이든 바꾸기 전에 먼저 합계가 분기 보고서와 일치하는지 확인하겠습니다.",
  "이는 차이가 환율 변환이 아니라 중복된 주문에서 비롯되었음을 시사합니다.",
  "지역별로 묶어 보면 북부 매장이 최근 두 달 성장의 대부분을 차지합니다.",
  "이전 시도는 함수가 배열을 기대했지만 로더가 반복자를 반환해서 실패했습니다.",
  "더 간단한 설명은 반품이 음수 매출로 기록된 뒤 실수로 걸러졌다는 것입니다.",
  "다음으로 정리된 데이터 세트를 기준 수치와 비교하고 모든 차이를 기록하겠습니다.",
  "결과는 그럴듯해 보이지만 주별 편차가 예상보다 큽니다.",
  "타임스탬프가 현지 시간으로 저장되어 일부 이벤트가 다음 날로 밀렸습니다.",
  "집계 코드의 최종 버전은 남기고 이전 실험은 버려야 합니다.",
];

export function cjk(rand) {
  const sentences = pick(rand, [ZH, JA, KO]);
  const out = [];
  for (let p = 0; p < int(rand, 3, 6); p++) {
    const paragraph = [];
    for (let s = 0; s < int(rand, 2, 5); s++) paragraph.push(pick(rand, sentences));
    if (rand() < 0.5) paragraph.push(`rows=${int(rand, 100, 99999)} total=${int(rand, 1000, 999999)}`);
    out.push(paragraph.join(sentences === KO ? " " : ""));
  }
  return out.join("\n\n");
}

export const KINDS = { prose, code, markdown, logs, cjk };
