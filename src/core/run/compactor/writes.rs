//! The writes of a compaction, in journal order: the journal, the archive, the swap of the
//! summary into the logs; and the metrics.

use super::*;

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// Writes the journal, then the archive of the originals. A full store first loses expired
    /// archives, then the oldest ones (never this one), before the write fails with the sizes.
    pub(super) fn write_archive(
        &self,
        selection: &Selection<'_>,
        ledger: &Ledger,
        trigger: Trigger,
        tokens_before: usize,
        usage_before: f64,
    ) -> Result<String, CompactionError> {
        let logs = self.logs.borrow();
        let store = logs.store();
        let mut timestamp = self.now().max(0.0) as u64;
        while store.get(&self.keys.archive(timestamp))?.is_some() {
            timestamp += 1;
        }
        let key = self.keys.archive(timestamp);
        let archive = Archive {
            timestamp,
            expires_at: expiry(timestamp, self.settings.archive_lifetime_ms()),
            iterations: selection.iterations(),
            trigger: trigger.as_str().to_owned(),
            data: SelectedData(selection),
            positions: Some(selection.positions.clone()),
            metadata: ArchiveMetadata {
                context_usage_before: usage_before,
                total_tokens_before: tokens_before,
            },
            entry_iterations: Some(EntryIterations::of(selection)),
            ledger: Some(ledger.facts.clone()),
        };
        let journal = Journal {
            stage: JournalStage::Archiving,
            archive_key: key.clone(),
            before: None,
            after: None,
            result: None,
        };
        write_json(store, &logs.keys().journal(), &journal)
            .map_err(|err| with_free_space(store, err))?;
        loop {
            match write_json(store, &key, &archive) {
                Ok(()) => break,
                Err(StorageError::Quota { .. }) if self.free_an_archive(&key)? => continue,
                Err(err) => {
                    let _ = store.remove(&logs.keys().journal());
                    return Err(with_free_space(store, err).into());
                }
            }
        }
        drop(logs);
        self.emit(CompactionEvent::Archived {
            archive_key: key.clone(),
            timestamp,
        });
        Ok(key)
    }

    /// Removes one expired archive to make room (never `keep`); returns whether one went. An
    /// unexpired archive is never removed to make room: it may be the only copy of entries the
    /// user wants back, so the write fails instead and the error says what to delete.
    pub(super) fn free_an_archive(&self, keep: &str) -> Result<bool, StorageError> {
        let logs = self.logs.borrow();
        let store = logs.store();
        let (infos, _) = list_archives(store, &self.keys)?;
        let now = self.now();
        match infos
            .iter()
            .find(|info| info.key != keep && info.expires_at as f64 <= now)
        {
            Some(expired) => store.remove(&expired.key).map(|()| true),
            None => Ok(false),
        }
    }

    /// Writes the summary in place of the selected entries, keeping anything appended since
    /// `before` was read, under a journal that lets a later load finish or undo it. On a
    /// failure the logs are written back and the archive removed.
    pub(super) fn swap_in(
        &self,
        before: &ReadLogs,
        selection: &Selection<'_>,
        summary: String,
        archive_key: String,
        tokens_before: usize,
        compacted_tokens: usize,
    ) -> Result<CompactionResult, CompactionError> {
        let logs = self.logs.borrow();
        let store = logs.store();
        let journal_key = logs.keys().journal();
        let abandon = |err: CompactionError| {
            let _ = store.remove(&archive_key);
            let _ = store.remove(&journal_key);
            err
        };
        let now_raw = logs.raw_logs().map_err(|e| abandon(e.into()))?;
        // Parsed again only when another writer changed the logs since they were read.
        let reparsed;
        let now = if now_raw == before.raw {
            &before.parsed
        } else {
            reparsed = now_raw.parse(logs.keys()).map_err(|e| abandon(e.into()))?;
            &reparsed
        };
        let before = &before.parsed;
        let entry = Stored::encode(&summary_entry(selection.last, &archive_key, &summary))
            .map_err(|err| {
                abandon(CompactionError::from(StorageError::Unavailable {
                    reason: format!("could not encode the summary: {err}"),
                }))
            })?;
        let after = replace(before, now, selection, &entry)
            .map_err(|conflict| abandon(CompactionError::Busy(conflict.0)))?;
        let mut after_raw = RawLogs::encode(&after);
        // A log none of whose entries was compacted keeps its text: it is not written.
        let counts = selection.counts();
        if counts.execution == 0 {
            after_raw.execution.clone_from(&now_raw.execution);
        }
        if counts.tool_activity == 0 {
            after_raw.tool_activity.clone_from(&now_raw.tool_activity);
        }
        // Counted by difference rather than again: what stayed, the summary, and any appends.
        let tokens_after = tokens_before - compacted_tokens
            + after
                .reasoning
                .first()
                .map_or(0, |entry| estimate_tokens(entry))
            + appended_since(before, now).estimate_tokens();
        let tokens_saved = tokens_before.saturating_sub(tokens_after);
        let result = CompactionResult {
            iterations: [1, selection.last],
            tokens_before,
            tokens_after,
            tokens_saved,
            reduction: if tokens_before == 0 {
                0.0
            } else {
                tokens_saved as f64 / tokens_before as f64
            },
            context_usage_before: self.settings.usage(tokens_before),
            context_usage_after: self.settings.usage(tokens_after),
            attempts: self.current.attempt.get(),
            duration_ms: (self.now() - self.current.started_ms.get()).max(0.0),
            archive_key: archive_key.clone(),
            summary,
            usage: self.current.usage.get(),
            model: self.current.answered_by.borrow().clone(),
            coverage: Coverage::default(),
        };
        let journal = Journal {
            stage: JournalStage::Replacing,
            archive_key: archive_key.clone(),
            before: Some(now_raw.hashes()),
            after: Some(after_raw.hashes()),
            // The summary itself is in the reasoning log being written; the journal stays small.
            result: Some(CompactionResult {
                summary: String::new(),
                ..result.clone()
            }),
        };
        write_json(store, &journal_key, &journal)
            .map_err(|err| abandon(with_free_space(store, err).into()))?;
        if let Err(err) = logs.write_changed(&after_raw, &now_raw) {
            let _ = logs.write_changed(&now_raw, &after_raw);
            return Err(abandon(with_free_space(store, err).into()));
        }
        // The compaction is complete once the logs are written; a journal left behind by a
        // failed removal is recognised as complete on the next load.
        let _ = store.remove(&journal_key);
        Ok(result)
    }

    pub(super) fn update_metrics(
        &self,
        change: impl FnOnce(&mut CompactionMetrics),
    ) -> Result<(), StorageError> {
        let logs = self.logs.borrow();
        let key = self.keys.metrics();
        let mut metrics: CompactionMetrics = read_value(logs.store(), &key)?.unwrap_or_default();
        change(&mut metrics);
        write_json(logs.store(), &key, &metrics)
    }
}
