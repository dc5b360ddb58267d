//! Data and timing a hostile user (or a confused app) produces (issue #13); the cases live in
//! `common/hostile.rs`, which also gives the fault matrix of docs/guarantees.md its rows.
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use common::hostile;

#[test]
fn an_entry_read_back_and_appended_again_is_stored_once() {
    hostile::an_entry_read_back_and_appended_again_is_stored_once();
}

#[test]
fn every_write_of_a_compaction_is_made_under_the_store_lock() {
    hostile::every_write_of_a_compaction_is_made_under_the_store_lock();
}

#[test]
fn a_lease_far_in_the_future_holds_nothing_back() {
    hostile::a_lease_far_in_the_future_holds_nothing_back();
}

#[test]
fn an_archive_kept_for_ever_does_not_expire_at_once() {
    hostile::an_archive_kept_for_ever_does_not_expire_at_once();
}

#[test]
fn a_crash_after_the_archive_write_is_undone_without_doubling_entries_without_ids() {
    hostile::a_crash_after_the_archive_write_is_undone_without_doubling_entries_without_ids();
}

#[test]
fn recovery_never_touches_a_key_of_other_code() {
    hostile::recovery_never_touches_a_key_of_other_code();
}

#[test]
fn a_huge_iteration_number_costs_no_work_or_storage_of_its_size() {
    hostile::a_huge_iteration_number_costs_no_work_or_storage_of_its_size();
}

#[test]
fn archives_are_neither_deleted_nor_rolled_back_while_another_tab_compacts() {
    hostile::archives_are_neither_deleted_nor_rolled_back_while_another_tab_compacts();
}

#[test]
fn quota_pressure_never_removes_an_unexpired_archive() {
    hostile::quota_pressure_never_removes_an_unexpired_archive();
}

#[test]
fn appended_text_never_starts_an_iteration_or_poses_as_a_summary() {
    hostile::appended_text_never_starts_an_iteration_or_poses_as_a_summary();
}

#[test]
fn the_last_iteration_number_is_refused_not_wrapped() {
    hostile::the_last_iteration_number_is_refused_not_wrapped();
}
