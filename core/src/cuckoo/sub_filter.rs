//! One sub-filter of a cuckoo filter: a power of two of buckets, each `bucket_size` slots of
//! the filter's width, in one zeroed array (an empty slot is 0).

use super::fingerprint::{position, replace, Slot};
use super::params::CuckooError;
use crate::bytes::ByteArray;

/// One sub-filter: `buckets` buckets of the filter's bucket size and width.
pub struct SubFilter {
    pub(super) buckets: u64,
    pub(super) slots: ByteArray,
}

impl SubFilter {
    pub(super) fn try_new(buckets: u64, bucket_bytes: usize) -> Result<SubFilter, CuckooError> {
        let bytes = buckets.checked_mul(bucket_bytes as u64).ok_or(CuckooError::TooLarge)?;
        let slots = ByteArray::try_zeroed(bytes).map_err(|_| CuckooError::OutOfMemory)?;
        Ok(SubFilter { buckets, slots })
    }

    /// Number of buckets: a power of two.
    pub fn buckets(&self) -> u64 {
        self.buckets
    }

    /// The slots, bucket after bucket: `buckets` times the bucket size times the width's
    /// bytes. What SCANDUMP dumps and RDB saves.
    pub fn bytes(&self) -> &[u8] {
        self.slots.as_slice()
    }

    pub(super) fn bucket(&self, bucket: u64, bucket_bytes: usize) -> &[u8] {
        let start = bucket as usize * bucket_bytes;
        &self.slots.as_slice()[start..start + bucket_bytes]
    }

    pub(super) fn bucket_mut(&mut self, bucket: u64, bucket_bytes: usize) -> &mut [u8] {
        let start = bucket as usize * bucket_bytes;
        &mut self.slots.as_mut_slice()[start..start + bucket_bytes]
    }

    /// Stores `fingerprint` in the first empty slot of either bucket.
    pub(super) fn store<S: Slot>(
        &mut self,
        candidates: [u64; 2],
        fingerprint: S,
        bucket_bytes: usize,
    ) -> bool {
        for bucket in candidates {
            let bucket = self.bucket_mut(bucket, bucket_bytes);
            if let Some(empty) = position(bucket, S::EMPTY) {
                replace(bucket, empty, fingerprint);
                return true;
            }
        }
        false
    }
}
