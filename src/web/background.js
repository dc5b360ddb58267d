// What `compact({ background: true })` resolves to: `CompactionStarted`, once the compaction
// asks for its summary (the loop goes on meanwhile), or once it ended, whichever comes first.

/** One compaction in the background: `tell` says the summary is asked for, `follow` its end. */
export class BackgroundStart {
  constructor() {
    this.promise = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** The summary of iterations `first`..`last` is asked for. */
  tell(first, last) {
    this.resolve({ started: true, iterations: [first, last], done: this.done });
  }

  /** What `compact()` resolves to, `done` the compaction's own promise (set before any
   * `tell`: the compaction's body runs only after this task). A compaction that ended before
   * it asked for a summary (a clearing, a refusal) settles it as it ended; `done` is handled
   * here, so that an app that only listens to the events hears no unhandled rejection. */
  follow(done) {
    this.done = done;
    done.then((result) => this.tell(...result.iterations), this.reject);
    return this.promise;
  }
}
