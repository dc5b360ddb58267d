// A break that gives the page its turn (input, frames, the app's own tasks) and resumes at
// once after: `scheduler.yield()` where the browser has it (its continuation runs before other
// queued tasks), else a MessageChannel message — not `setTimeout(0)`, which browsers hold back
// to 4 ms once timeouts nest, so that a compaction of many short tasks would idle between them.

/** A Promise that resolves once the page has had its turn. */
export function pageYield() {
  const scheduler = globalThis.scheduler;
  if (typeof scheduler?.yield === "function") return scheduler.yield();
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
