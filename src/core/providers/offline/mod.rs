//! The built-in `offline` provider: a deterministic summary drawn from the logs themselves,
//! with no network. It keeps the last successful code per task, results and numbers,
//! successful tool operations, resolved and open failures, and the latest conclusions, and it
//! carries an earlier summary's points forward.

pub(crate) mod caps;
mod sections;

use std::fmt::Write;

use crate::core::error::ProviderFailure;
use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::{FactKind, Ledger};
use crate::core::ports::timer::LocalBoxFuture;
use crate::core::providers::port::{Generation, SummaryProvider, SummaryRequest};
use crate::core::steps::digest::Digest;
use crate::core::steps::selection::Selection;
use crate::core::steps::swap::summary_entry;
use crate::core::steps::validation::{canonical_heading, SECTIONS};
use caps::CAPS;
use sections::render;

/// The share of the compacted tokens the offline summary aims to stay under.
pub(crate) const TARGET_SHARE: f64 = 0.28;

/// The `offline` provider.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineProvider;

impl SummaryProvider for OfflineProvider {
    fn model(&self) -> String {
        "offline".into()
    }

    fn grounded(&self) -> bool {
        true
    }

    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderFailure>> {
        let summary = offline_summary(request.selection, request.digest, request.ledger);
        Box::pin(async move { Ok(summary.into()) })
    }
}

/// The offline summary of `selection`: all six sections, deterministic, and every fact of
/// `ledger` kept by construction (a fact the sections do not already state is added to the
/// last one, as the ledger words it).
pub fn offline_summary(selection: &Selection, digest: &Digest, ledger: &Ledger) -> String {
    let compacted: usize = selection.originals().estimate_tokens();
    let mut summary = String::new();
    for caps in CAPS {
        summary = render(digest, caps);
        for fact in ledger.missing_in(&summary) {
            summary.push_str("\n- ");
            summary.push_str(&fact.one_line());
        }
        if (estimate_tokens(&summary) as f64) <= compacted as f64 * TARGET_SHARE {
            break;
        }
    }
    // A short session leaves little room: when even the tightest sections and the facts come
    // close to what they replace, the facts alone under the required headings are the summary.
    // The entry adds its header and the archive line (an archive key of up to 40 digits here).
    let entry_tokens = estimate_tokens(&summary_entry(
        selection.last,
        &"0".repeat(40),
        &summary,
        None,
    ));
    if (entry_tokens as f64) > compacted as f64 * SHORT_SHARE {
        let facts_only = facts_only(digest, ledger);
        if estimate_tokens(&facts_only) < estimate_tokens(&summary) {
            return facts_only;
        }
    }
    summary
}

/// Above this share of the compacted tokens (the whole summary entry counted) the offline
/// summary falls back to the facts only: the compaction refuses an entry above 80%.
const SHORT_SHARE: f64 = 0.75;

/// The three required sections holding the ledger's facts and nothing else: the goal under the
/// objective, results under the discoveries, the rest under the solutions.
fn facts_only(digest: &Digest, ledger: &Ledger) -> String {
    let mut sections: [Vec<String>; 3] = Default::default();
    for fact in &ledger.facts {
        let slot = match fact.kind {
            FactKind::Goal => 0,
            FactKind::Result => 1,
            _ => 2,
        };
        sections[slot].push(fact.one_line());
    }
    let fallbacks = [
        format!(
            "Iterations {}-{} are compacted; the originals are archived.",
            digest.first, digest.last
        ),
        "No results were recorded in these iterations.".to_owned(),
        "The working code of these iterations is in the archive.".to_owned(),
    ];
    let mut out = String::new();
    for (((emoji, title), points), fallback) in SECTIONS.iter().zip(sections).zip(fallbacks) {
        let _ = writeln!(out, "{}", canonical_heading(emoji, title));
        if points.is_empty() {
            let _ = writeln!(out, "- {fallback}");
        }
        for point in points {
            let _ = writeln!(out, "- {point}");
        }
    }
    out.trim_end().to_owned()
}
