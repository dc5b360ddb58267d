//! What a compactor reads before it acts, and the one preparation every query and the
//! compaction share: observe (the logs as stored, placed and counted as the rules see them),
//! then select, digest, draw the ledger and build the prompt. Reads only.

use crate::core::error::StorageError;
use crate::core::log::iteration::Unit;
use crate::core::log::placement::PlacedIterations;
use crate::core::log::snapshot::Census;
use crate::core::log::snapshot::LogSnapshot;
use crate::core::model::clearing::Rung;
use crate::core::model::facts::{Carried, Ledger, Pin};
use crate::core::model::outcome::CompactionPlan;
use crate::core::model::settings::CompactorSettings;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::ports::usage::PromptUsage;
use crate::core::steps::clearing::{clearable, with_cleared_bodies, ClearedEntry, Clearing};
use crate::core::steps::digest::Digest;
use crate::core::steps::ledger::{Drawn, IdentifierScan};
use crate::core::steps::prompt::build_prompt;
use crate::core::steps::rules::{plan_of, summary_follows_clearing, RuleInput};
use crate::core::steps::selection::Selection;
use crate::core::steps::summary_budget::{pinned_tokens, SummaryBudget};
use crate::core::steps::term_search::{TermScan, TermsFound};
use crate::core::steps::user_words::UserWords;
use crate::core::store::log_store::LogStore;
use crate::core::store::raw_logs::ReadLogs;
use crate::core::store::recall_tool::RECALL_TOOL_NAME;
use crate::core::store::shelf::Shelf;

/// The logs as one compactor sees them.
pub struct LogView<'a, S, C> {
    /// The logs.
    pub logs: &'a LogStore<S, C>,
    /// Where their archives are, and whether a compaction runs in this page.
    pub shelf: &'a Shelf<S, C>,
    /// The compactor's options.
    pub settings: &'a CompactorSettings,
    /// The app's own measure of its prompt.
    pub usage: &'a PromptUsage,
}

/// The logs as read at one moment, placed, and what the rules see of them.
pub struct Observed {
    /// The stored texts and their entries.
    pub read: ReadLogs,
    /// The iteration of every entry.
    pub placed: PlacedIterations,
    /// What the rules look at.
    pub input: RuleInput,
}

/// The logs as read, placed, on their way to [`Observed`]: the count of their tokens is two
/// steps (the reasoning log, then the other two), so that a caller sharing the page can let it
/// run between ([`LogView::placing`], [`Counting::count_reasoning`], [`LogView::counted`]).
pub struct Counting {
    read: ReadLogs,
    placed: PlacedIterations,
    /// The newest iteration (the selection ends before the recent ones the app keeps).
    newest: u32,
    census: Census,
}

impl Counting {
    /// Counts the reasoning log's tokens.
    pub fn count_reasoning(&mut self) {
        let (parsed, placed) = (&self.read.parsed, &self.placed);
        parsed.count_reasoning(placed, &mut self.census);
    }
}

/// What a compaction of the observed logs would work from: the selection, what it says, the
/// facts its summary must keep, and the prompt.
pub struct Prepared<'o> {
    /// Iterations 1..N-1 of the observed logs.
    pub selection: Selection<'o>,
    /// What the selected entries say, read once.
    pub digest: Digest,
    /// The facts the summary must keep: the digest's, the pins, and those the earlier
    /// summaries in the selection had to keep (read from their archives).
    pub ledger: Ledger,
    /// The prompt a compaction sends.
    pub prompt: String,
    /// How many tokens the summary may take.
    pub budget: SummaryBudget,
    /// The key an archive written now would take (the compaction picks its own when it writes;
    /// one as long sizes the summary's entry).
    pub archive_key: String,
    /// The user's items the summary keeps, in a section the package writes after the model's.
    pub user: UserWords,
}

impl<S: KeyValueStore, C: Clock> LogView<'_, S, C> {
    /// Usage (0..1, can exceed 1) at `log_tokens`: the app's measure when it gives one
    /// (`with_report` false: a reported size is not counted), else the logs plus `baseTokens`.
    pub fn usage_at(&self, log_tokens: usize, with_report: bool) -> f64 {
        match self.usage.prompt_tokens(with_report) {
            Some(tokens) => tokens as f64 / self.settings.context_window_tokens as f64,
            None => self.settings.usage(log_tokens),
        }
    }

    /// Share of the context window in use now.
    pub fn context_usage(&self) -> Result<f64, StorageError> {
        Ok(self.usage_at(self.logs.estimate_tokens()?, true))
    }

    /// The logs as stored, placed and counted (one read, one count).
    pub fn observe(&self) -> Result<Observed, StorageError> {
        self.observed(self.logs.read()?)
    }

    /// The logs `read` before (a caller that shares the page may let it run between the read
    /// and the count), placed and counted.
    pub fn observed(&self, read: ReadLogs) -> Result<Observed, StorageError> {
        let mut counting = self.placing(read);
        counting.count_reasoning();
        self.counted(counting)
    }

    /// The logs `read` before, placed: the first step of [`LogView::observed`].
    pub fn placing(&self, read: ReadLogs) -> Counting {
        let mut placed = read.parsed.placed_iterations();
        // The selection ends before the recent iterations the app keeps verbatim.
        let newest = placed.current;
        placed.current = newest
            .saturating_sub(self.settings.keep_recent_iterations)
            .max(newest.min(1))
            .min(self.logs.verbatim_from().unwrap_or(u32::MAX));
        let census = Census {
            current: placed.current,
            ..Census::default()
        };
        Counting {
            read,
            placed,
            newest,
            census,
        }
    }

    /// The execution and tool logs counted, and what the rules see: the last step of
    /// [`LogView::observed`], after [`Counting::count_reasoning`].
    pub fn counted(&self, counting: Counting) -> Result<Observed, StorageError> {
        let Counting {
            read,
            placed,
            newest,
            mut census,
        } = counting;
        read.parsed.count_entries(&placed, &mut census);
        let input = RuleInput {
            current_iteration: newest,
            kept_recent: newest - placed.current,
            iteration_running: self.logs.iteration_running(),
            iteration_running_here: self.logs.iteration_running_here(),
            log_tokens: census.tokens,
            usage: self.usage_at(census.tokens, true),
            compacting: self.shelf.page().compacting(),
            compacting_elsewhere: self.shelf.compacting_elsewhere()?,
            summary_tokens: census.summary_tokens,
            new_tokens: census.compacted_tokens - census.summary_tokens,
            pinned_tokens: pinned_tokens(&self.logs.pins_in_force()?),
        };
        Ok(Observed {
            read,
            placed,
            input,
        })
    }

    /// Selection, digest, ledger and prompt of `observed` (every stage of [`Preparing`] at once).
    pub fn prepare<'o>(&self, observed: &'o Observed) -> Result<Prepared<'o>, StorageError> {
        let mut preparing = Preparing::of(observed);
        loop {
            if let Some(prepared) = preparing.next_stage(self)? {
                return Ok(prepared);
            }
        }
    }

    /// What a compaction would do now (and why it would refuse or for what it would wait).
    pub fn plan(&self) -> Result<CompactionPlan, StorageError> {
        let observed = self.observe()?;
        let prepared = self.prepare(&observed)?;
        let mut plan = plan_of(
            &prepared.selection,
            &observed.input,
            &prepared.ledger,
            &prepared.prompt,
            self.settings,
            &prepared.budget,
            &prepared.archive_key,
        );
        let cleared = self.clearable(&observed, &prepared.archive_key);
        let freed: usize = cleared.iter().map(|entry| entry.tokens).sum();
        let after = self.usage_at(observed.input.log_tokens.saturating_sub(freed), false);
        let follows = summary_follows_clearing(self.settings, &observed.input, freed, after);
        if !cleared.is_empty() && !follows {
            plan.rung = Rung::Clear;
        }
        plan.cleared = cleared.iter().map(ClearedEntry::body).collect();
        plan.user_items = prepared.user.current;
        Ok(plan)
    }

    /// A key as long as the one an archive written now would take.
    fn next_archive_key(&self) -> String {
        let now = self.logs.clock().now_ms().max(0.0) as u64;
        self.shelf.keys().archive(now)
    }

    /// Whether clearing `observed` now would free at least `clearing.atLeastTokens`.
    pub fn clearing_due(&self, observed: &Observed) -> bool {
        let Some(rules) = self.settings.clearing.rules() else {
            return false;
        };
        let cleared = self.clearable(observed, &self.next_archive_key());
        let freed: usize = cleared.iter().map(|entry| entry.tokens).sum();
        freed > 0 && freed >= rules.due_at(self.settings.context_window_tokens)
    }

    /// The bodies the clearing rung would take from `observed` now, each placeholder naming
    /// `archive_key` (none when `clearing` is `false`).
    pub fn clearable(&self, observed: &Observed, archive_key: &str) -> Vec<ClearedEntry> {
        clearing_of(observed, self.settings, archive_key, self.logs.unit())
            .map_or_else(Vec::new, |c| clearable(&c))
    }
}

/// Tools whose entries stay whole one iteration longer: the recall tool's.
const KEPT_WHOLE: &[&str] = &[RECALL_TOOL_NAME];

/// What the clearing rung reads of `observed` under `settings`, its placeholders naming
/// `archive_key` and calling an iteration `unit` (`None` when `clearing` is `false`).
pub fn clearing_of<'a>(
    observed: &'a Observed,
    settings: &'a CompactorSettings,
    archive_key: &'a str,
    unit: Unit,
) -> Option<Clearing<'a>> {
    let rules = settings.clearing.rules()?;
    Some(Clearing {
        logs: &observed.read.parsed,
        placed: &observed.placed,
        rules,
        keep_whole: KEPT_WHOLE,
        archive_key,
        unit,
        keep_within: rules.due_at(settings.context_window_tokens),
    })
}

/// A preparation in stages, each linear in the logs and short at a million tokens, so that a
/// compaction can let the page run between them: the selection, its digest and the summary's
/// budget; the identifiers iteration N refers to (the earlier text read a slice of
/// [`SCAN_SLICE_BYTES`] a stage); the facts drawn, bound to the budget when none has to leave;
/// else what the archive holds of them (read only then, a slice a stage), and the bound; the
/// prompt with the last.
pub struct Preparing<'o> {
    observed: &'o Observed,
    /// The logs before this compaction's clearing, when one ran: the prompt shows their bodies.
    before: Option<&'o LogSnapshot>,
    stage: Stage<'o>,
}

/// How much text one stage reads for the facts' terms or the identifiers: about 10 ms in
/// Chromium on this machine where few terms are wanted, 35 ms a megabyte where every entry
/// holds a fetched page (#68's session); so half a megabyte.
pub const SCAN_SLICE_BYTES: usize = 1 << 19;

/// What a preparation has made so far.
enum Stage<'o> {
    Start,
    Selected(Box<Selected<'o>>),
    /// The earlier text read for the identifiers the kept iteration names, a slice a stage.
    Referencing(Box<Selected<'o>>, Box<IdentifierScan>),
    Referenced(Box<Selected<'o>>, Vec<(String, u32)>),
    Drawn(Box<Selected<'o>>, Drawn),
    /// Some fact leaves: what the archive holds of them is read next.
    Leaving(Box<Selected<'o>>, Drawn),
    Scanning(Box<Selected<'o>>, Drawn, Box<TermScan>),
    /// Only while a stage runs.
    Taken,
}

/// The first stage's work.
struct Selected<'o> {
    selection: Selection<'o>,
    digest: Digest,
    carried: Carried,
    pins: Vec<Pin>,
    budget: SummaryBudget,
    archive_key: String,
}

impl<'o> Selected<'o> {
    /// The ledger of `drawn` within the budget (`None`: a fact leaves and `archived` was not
    /// read).
    fn bound(&self, drawn: &Drawn, archived: Option<&TermsFound>) -> Option<Ledger> {
        let (selection, index) = (&self.selection, &self.carried.index);
        drawn.bound(&self.budget.facts(), selection, index, archived)
    }

    /// What was prepared, with `ledger` and the prompt built from it, over `shown` where given
    /// (the logs with the bodies a clearing of this compaction took, placed as observed).
    fn prepared<S: KeyValueStore, C: Clock>(
        self,
        ledger: Ledger,
        view: &LogView<'_, S, C>,
        shown: Option<(LogSnapshot, &PlacedIterations)>,
    ) -> Prepared<'o> {
        let shown = shown
            .as_ref()
            .map(|(logs, placed)| Selection::placed(logs, placed));
        let selection = shown.as_ref().unwrap_or(&self.selection);
        let prompt = build_prompt(selection, view.settings, &ledger, &self.budget);
        let cap = view.settings.summary_budget();
        let user = UserWords::draw(&self.digest, view.logs.unit(), cap);
        Prepared {
            user,
            selection: self.selection,
            digest: self.digest,
            ledger,
            prompt,
            budget: self.budget,
            archive_key: self.archive_key,
        }
    }
}

impl<'o> Preparing<'o> {
    /// The observed logs with the bodies the clearing took back, when one ran.
    fn shown(&self) -> Option<(LogSnapshot, &'o PlacedIterations)> {
        let before = self.before?;
        Some((
            with_cleared_bodies(&self.observed.read.parsed, before),
            &self.observed.placed,
        ))
    }

    /// A preparation of `observed`, not begun.
    pub fn of(observed: &'o Observed) -> Self {
        Preparing {
            observed,
            before: None,
            stage: Stage::Start,
        }
    }

    /// This preparation, its prompt showing the bodies `before` held where the observed logs
    /// hold a placeholder this compaction's clearing put there (the summariser reads what it
    /// folds; the list gets the placeholders).
    pub fn showing(self, before: Option<&'o LogSnapshot>) -> Self {
        Preparing { before, ..self }
    }

    /// Runs the next stage over `view`: what it prepared once the last has run.
    pub fn next_stage<S: KeyValueStore, C: Clock>(
        &mut self,
        view: &LogView<'_, S, C>,
    ) -> Result<Option<Prepared<'o>>, StorageError> {
        let observed = self.observed;
        self.stage = match std::mem::replace(&mut self.stage, Stage::Taken) {
            Stage::Start | Stage::Taken => {
                let selection = Selection::placed(&observed.read.parsed, &observed.placed);
                let compacted = observed.input.summary_tokens + observed.input.new_tokens;
                let archive_key = view.next_archive_key();
                let replaces_summary = observed.input.summary_tokens > 0;
                let mut digest = Digest::of(&selection);
                if let Some(goal) = view.logs.goal()? {
                    digest.query = Some(goal);
                }
                Stage::Selected(Box::new(Selected {
                    digest,
                    carried: view.shelf.with_archives(|a| a.carried(&selection)),
                    pins: view.logs.pins_in_force()?,
                    budget: SummaryBudget::of(
                        view.settings,
                        compacted,
                        selection.last,
                        &archive_key,
                        (replaces_summary, observed.input.pinned_tokens),
                    ),
                    selection,
                    archive_key,
                }))
            }
            Stage::Selected(selected) => {
                let scan = Box::new(IdentifierScan::of(&selected.selection));
                Stage::Referencing(selected, scan)
            }
            Stage::Referencing(selected, mut scan) => {
                if !scan.advance(&selected.selection, SCAN_SLICE_BYTES) {
                    self.stage = Stage::Referencing(selected, scan);
                    return Ok(None);
                }
                Stage::Referenced(selected, scan.found())
            }
            Stage::Referenced(selected, referenced) => {
                let Selected {
                    selection,
                    digest,
                    pins,
                    carried,
                    ..
                } = &*selected;
                let drawn = Drawn::with(referenced, selection, digest, pins, carried);
                Stage::Drawn(selected, drawn)
            }
            Stage::Drawn(selected, drawn) => match selected.bound(&drawn, None) {
                Some(ledger) => return Ok(Some(selected.prepared(ledger, view, self.shown()))),
                None => Stage::Leaving(selected, drawn),
            },
            Stage::Leaving(selected, drawn) => {
                let scan = Box::new(drawn.archived_scan(&selected.selection));
                Stage::Scanning(selected, drawn, scan)
            }
            Stage::Scanning(selected, drawn, mut scan) => {
                if !scan.advance(SCAN_SLICE_BYTES) {
                    self.stage = Stage::Scanning(selected, drawn, scan);
                    return Ok(None);
                }
                let archived = scan.found();
                let ledger = selected.bound(&drawn, Some(&archived)).unwrap_or_default();
                return Ok(Some(selected.prepared(ledger, view, self.shown())));
            }
        };
        Ok(None)
    }
}
