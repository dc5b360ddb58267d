//! The built-in `offline` provider: a deterministic summary drawn from the logs themselves,
//! with no network. It keeps the last successful code per task, results and numbers,
//! successful tool operations, resolved and open failures, and the latest conclusions, and it
//! carries an earlier summary's points forward.

pub(crate) mod caps;
mod sections;
pub(crate) mod source;
pub(crate) mod text;

use crate::core::ledger::Ledger;
use crate::core::provider::{
    Generation, LocalBoxFuture, ProviderError, SummaryProvider, SummaryRequest,
};
use crate::core::selection::Selection;
use crate::core::tokens::estimate_tokens;

use caps::CAPS;
use sections::render;
use source::Source;

/// The share of the compacted tokens the offline summary aims to stay under.
pub(crate) const TARGET_SHARE: f64 = 0.28;

/// The `offline` provider.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineProvider;

impl SummaryProvider for OfflineProvider {
    fn model(&self) -> String {
        "offline".into()
    }

    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderError>> {
        let summary = offline_summary(request.selection, request.ledger);
        Box::pin(async move { Ok(summary.into()) })
    }
}

/// The offline summary of `selection`: all six sections, deterministic, and every fact of
/// `ledger` kept by construction (a fact the sections do not already state is added to the
/// last one, as the ledger words it).
pub fn offline_summary(selection: &Selection, ledger: &Ledger) -> String {
    let source = Source::of(selection);
    let compacted: usize = selection.originals().estimate_tokens();
    let mut summary = String::new();
    for caps in CAPS {
        summary = render(&source, caps);
        for fact in ledger.missing_in(&summary) {
            summary.push_str("\n- ");
            summary.push_str(&fact.text.split_whitespace().collect::<Vec<_>>().join(" "));
        }
        if (estimate_tokens(&summary) as f64) <= compacted as f64 * TARGET_SHARE {
            break;
        }
    }
    summary
}
