//! Scripted fake endpoints for retrylab, and the ledger of what they saw and did.
