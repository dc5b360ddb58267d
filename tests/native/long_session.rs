//! Long sessions stay compactable: an agent that computes something new every iteration, with
//! two pins and a failure it never resolves, compacts by its own rhythm (`shouldAutoCompact`,
//! and `context_limit_error` once the window is full) forty times and more in a 16,384-token
//! window. It is never stuck; every summary is within its budget and keeps the goal, the pins
//! (short numbers included), the open failure and the newest result; every fact that left the
//! summary is named by an index line and read back by `recall`, IndexedDB-like archives being
//! kept whatever their number.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::rc::Rc;

use common::*;
use context_compactor::core::error::ProviderFailure;
use context_compactor::core::error::{CompactionError, ProviderError};
use context_compactor::core::json::read::RawJson;
use context_compactor::core::json::write::to_json;
use context_compactor::core::log::new_entries::{ExecutionInput, ToolActivityInput};
use context_compactor::core::log::tokens::estimate_tokens;
use context_compactor::core::model::clearing::Rung;
use context_compactor::core::model::outcome::CompactionResult;
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::archive_store::{ArchiveStore, MemoryArchiveStore};
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::events::RecordingSink;
use context_compactor::core::ports::storage::MemoryStore;
use context_compactor::core::ports::timer::{run_ready, LocalBoxFuture};
use context_compactor::core::providers::offline::OfflineProvider;
use context_compactor::core::providers::port::{Generation, SummaryProvider, SummaryRequest};
use context_compactor::core::run::compactor::Compactor;
use context_compactor::core::steps::validation::{validate_summary, SECTIONS};

const PINS: [&str; 2] = [
    "latency_p95 <= 350 ms",
    "Report drift in basis points with 3 retries on port 443",
];

/// A model that writes what fits its output budget: the six headings, the facts the prompt
/// lists, then a line per iteration of the history it was given, until `max_output_tokens`.
struct FittingProvider {
    max_output_tokens: usize,
}

/// A model that writes a point of its own under each heading (what it did, what it found, how),
/// then what [`FittingProvider`] writes.
struct PointsProvider(FittingProvider);

impl SummaryProvider for PointsProvider {
    fn model(&self) -> String {
        "points".into()
    }

    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderFailure>> {
        let inner = self.0.generate(request);
        Box::pin(async move {
            let text = inner.await?.text;
            let mut out = String::new();
            for line in text.lines() {
                out.push_str(line);
                out.push('\n');
                if line.starts_with("### ") {
                    out.push_str(
                        "- The agent kept checking shards for drift against the baseline and \
                         recorded each p95 and drift before moving on.\n",
                    );
                }
            }
            Ok(out.into())
        })
    }
}

impl SummaryProvider for FittingProvider {
    fn model(&self) -> String {
        "fitting".into()
    }

    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderFailure>> {
        let mut lines: Vec<String> = Vec::new();
        for (at, (emoji, title)) in SECTIONS.iter().enumerate() {
            lines.push(format!("### {emoji} {title}"));
            if at == 1 {
                lines.extend(
                    request
                        .ledger
                        .facts
                        .iter()
                        .map(|f| format!("- {}", f.one_line())),
                );
            }
            if at == 5 {
                let history = request
                    .prompt
                    .lines()
                    .filter(|l| l.starts_with("Iteration "));
                lines.extend(history.map(|l| format!("- {l}")));
            }
        }
        let mut text = String::new();
        for line in lines {
            if estimate_tokens(&text) + estimate_tokens(&line) > self.max_output_tokens {
                break;
            }
            text.push_str(&line);
            text.push('\n');
        }
        Box::pin(async move { Ok(text.into()) })
    }
}

struct Agent {
    /// Leaves a metrics read of shard `n` open every `fails_every` iterations (0: never).
    fails_every: u32,
    rig_logs: Logs,
    clock: ManualClock,
    compactor: Compactor<MemoryStore, ManualClock>,
}

/// One iteration of the agent: it checks shard `n`, which no iteration checked before.
fn iterate(agent: &Agent) -> u32 {
    let mut logs = agent.rig_logs.borrow_mut();
    let n = logs.start_iteration().unwrap();
    let p95 = 200 + (n * 37) % 150;
    logs.append_reasoning(&format!(
        "Iteration {n}: checking shard_{n:04} for drift against the baseline. The previous \
         shards were within bounds, so I read the next one, compute its p95 latency and its \
         drift, and record both before moving on to the following shard of the fleet."
    ))
    .unwrap();
    if agent.fails_every > 0 && n % agent.fails_every == 0 {
        logs.append_execution(ExecutionInput {
            success: false,
            code: format!("const m = await readMetrics(\"shard_{n:04}\", \"p95\");"),
            error: Some(RawJson::from(
                r#"{"message":"metrics endpoint timed out after 30000 ms"}"#,
            )),
            ..Default::default()
        })
        .unwrap();
    }
    if n == 3 {
        logs.append_execution(ExecutionInput {
            success: false,
            code: "await connectWarehouse('wh-eu-1')".into(),
            error: Some(RawJson::from(
                r#"{"message":"ECONNREFUSED warehouse wh-eu-1 refused the connection"}"#,
            )),
            metadata: Some(RawJson::from(r#"{"task":"connect warehouse"}"#)),
            ..Default::default()
        })
        .unwrap();
    }
    logs.append_execution(ExecutionInput {
        success: true,
        code: format!("return checkShard('shard_{n:04}');"),
        result: Some(RawJson::from(
            format!(
                r#"{{"shard":"shard_{n:04}","p95":{p95},"driftBp":{}}}"#,
                n * 7 + 3
            )
            .as_str(),
        )),
        execution_time: Some(12.0),
        metadata: Some(RawJson::from(
            format!(r#"{{"task":"check shard_{n:04}"}}"#).as_str(),
        )),
        ..Default::default()
    })
    .unwrap();
    logs.append_tool_activity(ToolActivityInput {
        kind: "fetch".into(),
        action: "get".into(),
        status: "success".into(),
        details: Some(RawJson::from(
            format!(r#""shards/shard_{n:04}.json""#).as_str(),
        )),
        extra: Vec::new(),
    })
    .unwrap();
    logs.finish_iteration();
    drop(logs);
    agent.clock.advance(60_000.0);
    n
}

/// What the test found over a session.
struct Session {
    compactions: Vec<CompactionResult>,
    budget: usize,
}

/// Runs the agent until `compactions` compactions happened, compacting by the app's rhythm;
/// panics when a full window cannot be compacted (stuck).
fn run(
    provider: Box<dyn SummaryProvider>,
    compactions: usize,
    fails_every: u32,
) -> (Agent, Session) {
    run_in(provider, compactions, fails_every, 16_384)
}

/// [`run`] in a window of `window` tokens.
fn run_in(
    provider: Box<dyn SummaryProvider>,
    compactions: usize,
    fails_every: u32,
    window: usize,
) -> (Agent, Session) {
    let (agent, mut session) = agent_in(provider, fails_every, window);
    for _ in 0..compactions * 200 {
        step(&agent, &mut session);
        if session.compactions.len() == compactions {
            break;
        }
    }
    assert_eq!(session.compactions.len(), compactions);
    (agent, session)
}

/// The agent in a window of `window` tokens with `provider`, before its first iteration.
fn agent_in(
    provider: Box<dyn SummaryProvider>,
    fails_every: u32,
    window: usize,
) -> (Agent, Session) {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let logs = logs_over(&memory, &clock);
    let settings = CompactorSettings {
        context_window_tokens: window,
        ..CompactorSettings::default()
    };
    let budget = settings.summary_budget();
    let compactor = shelved(
        Compactor::new(
            logs.clone(),
            provider,
            Box::new(InstantTimer::new(&clock)),
            Box::new(RecordingSink::default()),
            settings,
        )
        .unwrap(),
        |shelf| shelf.with_archive_store(Rc::new(MemoryArchiveStore::new())),
    );
    for pin in PINS {
        logs.borrow_mut().pin(pin).unwrap();
    }
    let agent = Agent {
        fails_every,
        rig_logs: logs,
        clock,
        compactor,
    };
    let session = Session {
        compactions: Vec::new(),
        budget,
    };
    (agent, session)
}

/// One iteration of the agent, then a compaction when the app's rhythm asks for one
/// (`shouldAutoCompact()`, else `context_limit_error` once the window is full); panics when a
/// full window cannot be compacted (stuck). The iteration's number.
fn step(agent: &Agent, session: &mut Session) -> u32 {
    step_by(agent, session, Rhythm::Auto)
}

/// When the app compacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rhythm {
    /// When `shouldAutoCompact()` says so, else once the window is full.
    Auto,
    /// Only once the window is full (`context_limit_error`), as an app that never asks.
    Full,
}

/// [`step`] by `rhythm`.
fn step_by(agent: &Agent, session: &mut Session, rhythm: Rhythm) -> u32 {
    let n = iterate(agent);
    let auto = rhythm == Rhythm::Auto && agent.compactor.should_auto_compact().unwrap();
    let trigger = if auto {
        Trigger::Auto
    } else if agent.compactor.context_usage().unwrap() >= 1.0 {
        Trigger::ContextLimitError
    } else {
        return n;
    };
    match run_ready(agent.compactor.compact(trigger)).unwrap() {
        Ok(result) => session.compactions.push(result),
        Err(CompactionError::NotAllowed(reason)) if trigger == Trigger::ContextLimitError => {
            panic!("stuck at iteration {n}: {reason}")
        }
        Err(err) => panic!("iteration {n}: {err}"),
    }
    n
}

/// Every property the issue asks of a long session, for each compaction.
fn holds_up(agent: &Agent, session: &Session) {
    let mut recalls: Vec<(u32, String)> = Vec::new();
    for (k, result) in session.compactions.iter().enumerate() {
        recalls.extend(summary_holds_up(k, result, session.budget));
    }
    assert!(
        recalls.len() > 100,
        "only {} results left the summaries",
        recalls.len()
    );
    // The originals of every result that left a summary come back.
    let archives = archives_now(&agent.compactor);
    {
        for (first, shard) in &recalls {
            let recalled = archives
                .with(|a| a.recall(*first))
                .unwrap_or_else(|err| panic!("recall({first}): {err}"))
                .unwrap_or_else(|| panic!("recall({first}) found nothing"));
            assert!(
                to_json(&recalled).contains(shard.as_str()),
                "recall({first}) lacks {shard}"
            );
        }
    }
}

/// The summary of compaction `k` is within `budget` and keeps the goal, the pins, the open
/// failure and the newest result; every fact that left it is named by an index line. The
/// first iteration and shard of each fact that left it.
fn summary_holds_up(k: usize, result: &CompactionResult, budget: usize) -> Vec<(u32, String)> {
    let mut recalls = Vec::new();
    let summary = &result.summary;
    assert!(
        estimate_tokens(summary) <= budget,
        "compaction {k}: {} tokens over {budget}",
        estimate_tokens(summary),
    );
    // The goal: the first iteration's first sentence, its shard exactly.
    assert!(
        summary.contains("Goal (iteration 1)") && summary.contains("shard_0001"),
        "{k}: {summary}"
    );
    assert!(
        summary.contains("latency_p95") && summary.contains("350"),
        "{k}: {summary}"
    );
    for term in ["3 retries", "443", "basis points"] {
        assert!(
            summary.contains(term),
            "compaction {k} lost {term}: {summary}"
        );
    }
    assert!(
        summary.contains("wh-eu-1") || summary.contains("connect warehouse"),
        "{summary}"
    );
    let newest = result.iterations[1];
    assert!(
        summary.contains(&format!("shard_{newest:04}")),
        "{k}: {summary}"
    );
    assert!(
        summary.contains(&format!("{}", newest * 7 + 3)),
        "{k}: {summary}"
    );
    assert!(result.coverage.missing.is_empty());
    for fact in &result.coverage.demoted {
        assert_eq!(fact.archive_key, result.archive_key);
        let [first, last] = fact.iterations;
        let named = summary
            .lines()
            .any(|line| line.contains(" recall(") && index_covers(line, first, last));
        assert!(
            named,
            "compaction {k}: no index line covers {first}..{last}\n{summary}"
        );
        if let Some(task) = fact.fact.split("task check ").nth(1) {
            recalls.push((first, task[..10].to_owned()));
        }
    }
    recalls
}

/// Whether the index line `line` (`…; recall(a..b)`) covers `first..=last`.
fn index_covers(line: &str, first: u32, last: u32) -> bool {
    recall_spans(line)
        .iter()
        .any(|[a, b]| *a <= first && last <= *b)
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn an_offline_session_of_forty_compactions_is_never_stuck_and_stays_in_budget() {
    let (agent, session) = run(Box::new(OfflineProvider), 40, 0);
    holds_up(&agent, &session);
    // Flat: the summary and the prompt at compaction 40 are no larger than at compaction 10.
    let after = |k: usize| session.compactions[k].tokens_after as f64;
    assert!(after(39) <= after(9) * 1.3, "{} vs {}", after(39), after(9));
    // recall(1) after 14 compactions and more: IndexedDB archives are not evicted by count.
    let first = archives_now(&agent.compactor).with(|a| a.recall(1));
    assert!(first.unwrap().is_some_and(|data| !data.is_empty()));
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_model_that_writes_what_fits_its_output_budget_is_never_stuck_and_stays_in_budget() {
    let (agent, session) = run(
        Box::new(FittingProvider {
            max_output_tokens: 4_000,
        }),
        40,
        0,
    );
    holds_up(&agent, &session);
    let after = |k: usize| session.compactions[k].tokens_after as f64;
    assert!(after(39) <= after(9) * 1.3, "{} vs {}", after(39), after(9));
}

/// Every open failure of each compaction's range is in its summary or named, with its
/// iteration, by an index line whose recall holds it; every index line is short, and its
/// recall covers no more iterations than the facts it counts.
fn failures_hold_up(agent: &Agent, session: &Session) {
    failures_kept(agent, session, false);
}

/// [`failures_hold_up`], where `counting` lets an `Open failures` line count the oldest it
/// cannot name (`K more in recall(a..b)`, a range that holds each of them); the failure of
/// iteration 3, the oldest, is checked too.
fn failures_kept(agent: &Agent, session: &Session, counting: bool) {
    for (k, result) in session.compactions.iter().enumerate() {
        let summary = &result.summary;
        let index: Vec<&str> = summary.lines().filter(|l| l.contains(" recall(")).collect();
        for line in &index {
            assert!(line.chars().count() < 240, "{k}: {line}");
            let spans = recall_spans(line);
            if line.starts_with("- Open failures") {
                // Each named with its own iteration: none counted without its name.
                assert!(
                    counting || !line.contains(" more in recall("),
                    "{k}: {line}\n{summary}"
                );
                continue;
            }
            let covered: u32 = spans.iter().map(|[a, b]| b - a + 1).sum();
            let counted: u32 = line
                .split([':', ','])
                .filter_map(|part| part.split_whitespace().next()?.parse::<u32>().ok())
                .sum::<u32>()
                + line.matches(" (").count() as u32;
            assert!(
                covered <= counted,
                "{k}: {covered} iterations for {counted} facts: {line}"
            );
        }
        let failures = (1..=result.iterations[1]).filter(|n| n % agent.fails_every == 0);
        let named_as = |f: u32| match f {
            3 => ("wh-eu-1".to_owned(), "connect warehouse (3)".to_owned()),
            f => (format!("shard_{f:04}"), format!("shard_{f:04}) ({f})")),
        };
        for f in failures.chain(counting.then_some(3)) {
            let (shard, listed_as) = named_as(f);
            let kept = summary
                .lines()
                .any(|l| l.contains("Still failing") && l.contains(&shard));
            let holds = |l: &str| recall_spans(l).iter().any(|[a, b]| *a <= f && f <= *b);
            let named = index.iter().any(|l| {
                let open = l.starts_with("- Open failures, recall(n) each:");
                let listed = open && l.contains(&listed_as);
                let counted = counting && open && l.contains(" more in recall(") && holds(l);
                listed || counted || (l.contains(&shard) && holds(l))
            });
            assert!(
                kept || named,
                "compaction {k}: the failure of {f} is lost\n{summary}"
            );
        }
    }
}

/// The recall ranges an index line names: `recall(a..b)` or `recall(a)`.
fn recall_spans(line: &str) -> Vec<[u32; 2]> {
    line.split("recall(")
        .skip(1)
        .filter_map(|rest| {
            let range = rest.split(')').next()?;
            let (a, b) = range.split_once("..").unwrap_or((range, range));
            Some([a.parse().ok()?, b.parse().ok()?])
        })
        .collect()
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn failures_left_open_every_few_dozen_iterations_never_crowd_out_the_newest_result() {
    let (agent, session) = run(Box::new(OfflineProvider), 40, 40);
    holds_up(&agent, &session);
    failures_hold_up(&agent, &session);
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn every_required_section_keeps_a_point_of_the_models_in_a_small_window() {
    // The default budget of a 3,000-token window is 450 tokens; the issue found the 18th
    // summary of a 150-iteration loop with its required sections empty.
    let provider = PointsProvider(FittingProvider {
        max_output_tokens: 4_000,
    });
    let (_, session) = run_in(Box::new(provider), 24, 0, 3_000);
    for (k, result) in session.compactions.iter().enumerate() {
        let summary = &result.summary;
        let validation = validate_summary(summary);
        assert!(validation.valid, "{k}: {:?}\n{summary}", validation.errors);
        for (emoji, title) in &SECTIONS[..3] {
            let heading = format!("### {emoji} {title}");
            let under = summary
                .lines()
                .skip_while(|l| *l != heading)
                .skip(1)
                .take_while(|l| !l.starts_with("### "))
                .filter(|l| !l.trim().is_empty() && !l.contains("See the archive"))
                .count();
            assert!(
                under > 0,
                "{k}: {title} holds nothing of the model's\n{summary}"
            );
        }
    }
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn recall_of_iteration_one_answers_after_fourteen_compactions_with_an_archive_store() {
    let database = Rc::new(MemoryArchiveStore::new());
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let logs = logs_over(&memory, &clock);
    let compactor = shelved(
        Compactor::new(
            logs.clone(),
            Box::new(OfflineProvider),
            Box::new(InstantTimer::new(&clock)),
            Box::new(RecordingSink::default()),
            CompactorSettings {
                summary_budget_tokens: Some(2_000),
                ..small_window()
            },
        )
        .unwrap(),
        |shelf| shelf.with_archive_store(Rc::clone(&database) as Rc<dyn ArchiveStore>),
    );
    for k in 0..14u64 {
        grow_session(&logs, &clock, 12, k + 1);
        run_ready(compactor.compact(Trigger::ContextLimitError))
            .unwrap()
            .unwrap_or_else(|err| panic!("compaction {}: {err}", k + 1));
        // The copy holds the texts of the archive the summary it replaced named (whose facts
        // it read) and of its own, not one per archive written.
        assert!(
            database.values_held() <= 2,
            "compaction {}: {} archive texts held",
            k + 1,
            database.values_held()
        );
    }
    let listed = archives_now(&compactor).with(|a| a.list()).unwrap();
    assert_eq!(
        listed.len(),
        14,
        "maxArchives (10) bounds localStorage archives only"
    );
    assert!(database.values_held() <= 1, "list() reads the digests");
    let fetched = database.values_fetched();
    let first = archives_now(&compactor).with(|a| a.recall(1));
    let first = first.unwrap_or_else(|err| panic!("recall(1): {err}"));
    assert!(first.is_some_and(|data| !data.is_empty()));
    assert!(
        database.values_fetched() - fetched <= 2,
        "recall(1) fetches the archive that holds it"
    );
    // Every compacted iteration reads back, each read fetching what it lacks; and what it
    // fetched is let go of by the next refresh.
    let last = listed
        .iter()
        .flat_map(|a| a.iterations.clone())
        .max()
        .unwrap();
    for n in 1..=last {
        let recalled = archives_now(&compactor).with(|a| a.recall(n)).unwrap();
        assert!(recalled.is_some_and(|data| !data.is_empty()), "recall({n})");
        assert!(database.values_held() <= 3, "recall({n}) holds a few texts");
    }
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn small_windows_with_the_default_budget_compact_every_time_within_it() {
    // The default budget of a 3,000-token window is 450 tokens: the facts that stay, their
    // headings and the index must fit it however the token counts of their parts add up.
    for seed in 1..=12u64 {
        let settings = CompactorSettings {
            context_window_tokens: 3_000,
            ..CompactorSettings::default()
        };
        let budget = settings.summary_budget();
        let answers = (0..6)
            .map(|_| Answer::Text(valid_summary("Grouped by region.")))
            .collect();
        let rig = Rig::with(MemoryStore::new(), answers, settings);
        for (k, grow) in [6u32, 5, 5].into_iter().enumerate() {
            grow_session(&rig.logs, &rig.clock, grow, seed * 10 + k as u64);
            let result = run_ready(rig.compactor.compact(Trigger::ContextLimitError))
                .unwrap()
                .unwrap_or_else(|err| panic!("seed {seed}, compaction {}: {err}", k + 1));
            assert!(
                estimate_tokens(&result.summary) <= budget,
                "seed {seed}: {}",
                result.summary
            );
        }
    }
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_tiny_budget_with_bulky_newest_results_still_compacts() {
    // 225 tokens for a 1,500-token window: the newest iteration's result (a bulky body) is the
    // last fact to leave, not one that must stay whatever the budget.
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let logs = logs_over(&memory, &clock);
    let settings = CompactorSettings {
        context_window_tokens: 1_500,
        recommended_usage: Some(0.05),
        ..CompactorSettings::default()
    };
    let compactor = Compactor::new(
        logs.clone(),
        Box::new(OfflineProvider),
        Box::new(InstantTimer::new(&clock)),
        Box::new(RecordingSink::default()),
        settings,
    )
    .unwrap();
    for k in 0..12 {
        {
            let mut logs = logs.borrow_mut();
            logs.start_iteration().unwrap();
            let tag = format!("t-{k}");
            logs.append_reasoning(&format!("reasoning {tag}")).unwrap();
            let body = format!("{tag} ").repeat(600);
            logs.append_execution(ExecutionInput {
                success: true,
                code: format!("chaos(\"{tag}\")"),
                result: Some(RawJson::from(
                    format!(r#"{{"tag":"{tag}","page":"{body}"}}"#).as_str(),
                )),
                ..Default::default()
            })
            .unwrap();
            logs.finish_iteration();
        }
        if k % 3 == 2 {
            run_ready(compactor.compact(Trigger::User))
                .unwrap()
                .unwrap_or_else(|err| panic!("after iteration {}: {err}", k + 1));
        }
    }
}

/// A line of a cut answer that names a figure no source holds.
const INVENTED: &str = "The fleet drifted 9,917 basis points in all.";

/// How the model of a session fails until it recovers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Every call fails: the network is down.
    Rejects,
    /// Every call answers 429 with a retry delay.
    RateLimited,
    /// Every answer is cut at its output limit, inside a line of its last section.
    Cut,
    /// Every answer echoes the prompt's first paragraph twenty times (a base model).
    Echoes,
    /// Every answer has the headings and points with no word in them.
    Junk,
}

/// A model that fails as `fault` says until `recovered` is set, then writes what
/// [`FittingProvider`] writes.
struct FaultyModel {
    fault: Fault,
    recovered: Rc<std::cell::Cell<bool>>,
    model: FittingProvider,
}

impl SummaryProvider for FaultyModel {
    fn model(&self) -> String {
        "faulty".into()
    }

    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderFailure>> {
        let answer = self.model.generate(request);
        let (fault, recovered) = (self.fault, self.recovered.get());
        let paragraph = request.prompt.split("\n\n").nth(1).unwrap_or("").to_owned();
        Box::pin(async move {
            if recovered {
                return answer.await;
            }
            let text = match fault {
                Fault::Rejects => {
                    return Err(ProviderError::Network("connection refused".into()).into())
                }
                Fault::RateLimited => {
                    return Err(ProviderError::Http {
                        status: 429,
                        message: "Resource has been exhausted (e.g. check quota).".into(),
                        retry_after_ms: Some(26_000),
                        lasting: false,
                    }
                    .into())
                }
                Fault::Cut => {
                    // A figure no source holds, as small models write them.
                    let whole = answer.await?.text.replacen(
                        "### 💡 CRITICAL INSIGHTS\n",
                        &format!("### 💡 CRITICAL INSIGHTS\n- {INVENTED}\n"),
                        1,
                    );
                    let last_line = whole.trim_end().rfind('\n').unwrap_or(0);
                    let cut = whole[..last_line + 12].to_owned();
                    return Ok(Generation {
                        cut: true,
                        ..Generation::from(cut)
                    });
                }
                Fault::Echoes => format!("{paragraph}\n").repeat(20),
                Fault::Junk => SECTIONS
                    .iter()
                    .map(|(emoji, title)| format!("### {emoji} {title}\n- 1.1.0.1.1.0\n- 1.1.0"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            };
            Ok(text.into())
        })
    }
}

/// Sessions by the app's rhythm (and by an app that compacts only once the window is full)
/// whose model fails as `fault` says for 100 iterations, then
/// recovers: never stuck; every stored summary valid, within its budget, keeping the goal,
/// the pins, the open failure and the newest result; every original of iterations 1..N-1
/// read back by `recall`; once the model answers, the next summary is the model's, written
/// over the fallback one. The results, in order.
fn never_stuck(fault: Fault) -> Vec<CompactionResult> {
    let full = never_stuck_by(fault, Rhythm::Full);
    assert!(full.iter().all(|result| result.context_usage_before >= 1.0));
    never_stuck_by(fault, Rhythm::Auto)
}

/// [`never_stuck`] with the app compacting by `rhythm`.
fn never_stuck_by(fault: Fault, rhythm: Rhythm) -> Vec<CompactionResult> {
    let recovered = Rc::new(std::cell::Cell::new(false));
    let model = FaultyModel {
        fault,
        recovered: recovered.clone(),
        model: FittingProvider {
            max_output_tokens: 4_000,
        },
    };
    let (agent, mut session) = agent_in(Box::new(model), 0, 6_000);
    let mut last = 0;
    while last < 100 {
        last = step_by(&agent, &mut session, rhythm);
    }
    let failing = session.compactions.len();
    assert!(failing >= 3, "{fault:?}: only {failing} compactions");
    for (k, result) in session.compactions.iter().enumerate() {
        let validation = validate_summary(&result.summary);
        assert!(validation.valid, "{fault:?} {k}: {:?}", validation.errors);
        summary_holds_up(k, result, session.budget);
    }
    let newest = session.compactions[failing - 1].iterations[1];
    {
        let archives = archives_now(&agent.compactor);
        for n in 1..=newest {
            let recalled = archives
                .with(|a| a.recall(n))
                .unwrap_or_else(|err| panic!("{fault:?}: recall({n}): {err}"))
                .unwrap_or_else(|| panic!("{fault:?}: recall({n}) found nothing"));
            assert!(
                to_json(&recalled).contains(&format!("shard_{n:04}")),
                "{fault:?}: recall({n}) lacks its shard"
            );
        }
    }
    recovered.set(true);
    // A provider that was down rests first: the loop falls back without asking it until its
    // rest is over, then the model's summary comes.
    while session.compactions.last().map(|result| result.rung) != Some(Rung::Summarize) {
        last = step_by(&agent, &mut session, rhythm);
        assert!(
            last < 300,
            "{fault:?}: no model summary after the model recovered"
        );
    }
    let failing = session.compactions.len() - 1;
    let upgrade = &session.compactions[failing];
    assert_eq!(upgrade.rung, Rung::Summarize, "{fault:?}");
    assert!(upgrade.fallback.is_none());
    let fell_back = session.compactions[failing - 1].rung == Rung::Fallback;
    assert_eq!(upgrade.upgraded, fell_back, "{fault:?}");
    let metrics = agent.compactor.metrics().unwrap();
    assert_eq!(metrics.upgrades, u32::from(fell_back));
    let fallbacks = session.compactions[..failing]
        .iter()
        .filter(|result| result.rung == Rung::Fallback)
        .count();
    assert_eq!(metrics.fallbacks as usize, fallbacks);
    let entry = agent.rig_logs.borrow().snapshot().unwrap().reasoning[0].to_string();
    assert!(
        !entry.contains("Summarised without the model"),
        "{fault:?}: {entry}"
    );
    session.compactions
}

/// The compactions of `results` before the model recovered fell back, each saying why.
fn fell_back_each_time(results: &[CompactionResult], code: &str) {
    let failing = &results[..results.len() - 1];
    for result in failing {
        assert_eq!(result.rung, Rung::Fallback);
        let reason = result.fallback.as_ref().expect("a reason");
        assert_eq!(reason.code, code);
        assert!(!reason.message.is_empty());
    }
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_model_that_rejects_every_call_never_leaves_the_loop_stuck() {
    let results = never_stuck(Fault::Rejects);
    fell_back_each_time(&results, "llm_network");
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_model_rate_limited_for_ever_never_leaves_the_loop_stuck() {
    let results = never_stuck(Fault::RateLimited);
    fell_back_each_time(&results, "llm_http");
    assert!(results[0].attempts >= 2, "the 429 was retried");
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_model_cut_at_its_output_limit_keeps_its_whole_lines() {
    let results = never_stuck(Fault::Cut);
    let failing = &results[..results.len() - 1];
    assert!(failing
        .iter()
        .all(|r| r.rung == Rung::Summarize && r.salvaged));
    assert!(failing.iter().all(|r| r.attempts == 1));
    // The invented figure stays marked wherever a summary keeps it.
    for result in failing {
        for line in result.summary.lines().filter(|line| line.contains("9,917")) {
            assert!(line.ends_with(" [unverified]"), "{line}");
        }
    }
    assert!(failing.iter().any(|r| !r.unverified.is_empty()));
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_model_that_echoes_the_prompt_never_leaves_the_loop_stuck() {
    let results = never_stuck(Fault::Echoes);
    fell_back_each_time(&results, "invalid_summary");
    let reason = results[0].fallback.as_ref().unwrap();
    assert!(
        reason.message.contains("copied from the instructions"),
        "{reason:?}"
    );
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_model_that_answers_junk_points_never_leaves_the_loop_stuck() {
    let results = never_stuck(Fault::Junk);
    fell_back_each_time(&results, "invalid_summary");
    let reason = results[0].fallback.as_ref().unwrap();
    assert!(reason.message.contains("no word in them"), "{reason:?}");
    for result in &results {
        assert!(!result.summary.contains("1.1.0"), "{}", result.summary);
    }
}

/// At 10,000 iterations (250 compactions of a 16K window, a failure left open every 40
/// iterations besides the one of iteration 3) every summary still names or counts every open
/// failure of its range with its iteration, as at 40 compactions.
#[test]
#[ignore = "10,000 iterations: scripts/test.sh runs it optimised"]
fn every_open_failure_stays_named_or_counted_over_ten_thousand_iterations() {
    for provider in [
        Box::new(OfflineProvider) as Box<dyn SummaryProvider>,
        Box::new(FittingProvider {
            max_output_tokens: 4_000,
        }),
    ] {
        let (agent, session) = run(provider, 250, 40);
        assert!(session.compactions[249].iterations[1] >= 10_000);
        failures_kept(&agent, &session, true);
    }
}
