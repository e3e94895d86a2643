//! What every decoder shares: its error, a reader of little-endian header fields, and the
//! source of an RDB record's values. Decoders trust nothing they read: every field is checked
//! before it is used, and nothing is allocated for a record that is refused.

use crate::bytes::{AllocationFailed, ByteArray};

/// Why stored data (a header, an RDB record) was refused. Nothing of it is kept: the caller
/// answers an error or fails the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// Not a header this version wrote, or one that describes no real filter.
    Malformed(&'static str),
    /// A valid header for a filter beyond the memory budget.
    TooLarge,
    /// The allocator had no memory for it.
    OutOfMemory,
}

impl From<AllocationFailed> for DecodeError {
    fn from(_: AllocationFailed) -> DecodeError {
        DecodeError::OutOfMemory
    }
}

/// The values of an RDB record, read in order. Each read fails on a short or corrupt file.
pub trait RdbSource {
    /// An unsigned 64-bit integer.
    fn unsigned(&mut self) -> Result<u64, DecodeError>;
    /// A signed 64-bit integer.
    fn signed(&mut self) -> Result<i64, DecodeError>;
    /// A double, bit for bit as it was saved: decoders compare error rates exactly.
    fn double(&mut self) -> Result<f64, DecodeError>;
    /// A string, in an array of its own: a link's bits are kept as read, never copied, so
    /// that loading needs no memory beyond the filter's.
    fn bytes(&mut self) -> Result<ByteArray, DecodeError>;
}

/// Where an RDB record's values go, in order: the module's save callback, or a digest.
pub trait RdbSink {
    /// An unsigned 64-bit integer.
    fn unsigned(&mut self, value: u64);
    /// A signed 64-bit integer.
    fn signed(&mut self, value: i64);
    /// A double, bit for bit.
    fn double(&mut self, value: f64);
    /// A string of bytes.
    fn bytes(&mut self, value: &[u8]);
}

/// Little-endian fields read off a header, each read failing on a truncated one.
pub struct Reader<'a>(pub &'a [u8]);

impl<'a> Reader<'a> {
    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.0.len() < n {
            return Err(DecodeError::Malformed("header is truncated"));
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(taken)
    }

    /// The next `N` bytes, as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut array = [0; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    /// The next byte.
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    /// The next 4 bytes, as a little-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// The next 8 bytes, as a little-endian `u64`.
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// The next 8 bytes, as the little-endian bits of an `f64`.
    pub fn f64(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_le_bytes(self.array()?))
    }
}

/// One value of an RDB record.
#[derive(Clone, Debug, PartialEq)]
pub enum RecordValue {
    /// Saved as unsigned.
    Unsigned(u64),
    /// Saved as signed.
    Signed(i64),
    /// Saved as a double.
    Double(f64),
    /// Saved as a string.
    Bytes(Vec<u8>),
}

/// An RDB record held in memory: what a save wrote, read back in the same order by a load.
/// The tests and fuzz targets stand it in for Redis's RDB; each read checks the value's kind,
/// as a real RDB's type markers do, but for integers: Redis saves a signed value as the
/// unsigned one of the same bits, so either reads as either.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record(pub std::collections::VecDeque<RecordValue>);

impl Record {
    fn next(&mut self) -> Result<RecordValue, DecodeError> {
        self.0.pop_front().ok_or(DecodeError::Malformed("short read"))
    }
}

impl RdbSink for Record {
    fn unsigned(&mut self, value: u64) {
        self.0.push_back(RecordValue::Unsigned(value));
    }
    fn signed(&mut self, value: i64) {
        self.0.push_back(RecordValue::Signed(value));
    }
    fn double(&mut self, value: f64) {
        self.0.push_back(RecordValue::Double(value));
    }
    fn bytes(&mut self, value: &[u8]) {
        self.0.push_back(RecordValue::Bytes(value.to_vec()));
    }
}

impl RdbSource for Record {
    fn unsigned(&mut self) -> Result<u64, DecodeError> {
        match self.next()? {
            RecordValue::Unsigned(value) => Ok(value),
            RecordValue::Signed(value) => Ok(value as u64),
            _ => Err(DecodeError::Malformed("a value of another kind where an integer was")),
        }
    }
    fn signed(&mut self) -> Result<i64, DecodeError> {
        match self.next()? {
            RecordValue::Signed(value) => Ok(value),
            RecordValue::Unsigned(value) => Ok(value as i64),
            _ => Err(DecodeError::Malformed("a value of another kind where an integer was")),
        }
    }
    fn double(&mut self) -> Result<f64, DecodeError> {
        match self.next()? {
            RecordValue::Double(value) => Ok(value),
            _ => Err(DecodeError::Malformed("a value of another kind where a double was")),
        }
    }
    fn bytes(&mut self) -> Result<ByteArray, DecodeError> {
        match self.next()? {
            RecordValue::Bytes(bytes) => ByteArray::try_copy_of(&bytes).map_err(|_| DecodeError::OutOfMemory),
            _ => Err(DecodeError::Malformed("a value of another kind where a string was")),
        }
    }
}

/// A value kept in an RDB record of RedisBloom's layout: the sketches (Count-Min, Top-K,
/// t-digest), whose module glue is one generic set of callbacks over this trait.
pub trait Persistent: Sized {
    /// The encoding version `save_rdb` writes, which RedisBloom's newest release reads.
    const ENCODING_VERSION: i32;

    /// Reads a record of any encoding version RedisBloom has written (or this crate writes),
    /// checking every value before it is trusted and refusing, with nothing allocated, a
    /// record that would need more than `max_bytes` of memory.
    fn load_rdb(
        encoding_version: i32,
        source: &mut impl RdbSource,
        max_bytes: usize,
    ) -> Result<Self, DecodeError>;

    /// Writes the record, in `ENCODING_VERSION`, that `load_rdb` and RedisBloom read back.
    /// It is also what DEBUG DIGEST-VALUE digests, so it holds every bit a later answer
    /// depends on.
    fn save_rdb(&self, sink: &mut impl RdbSink);

    /// Writes the record a RESTORE payload carries (the AOF rewrite's), and answers its
    /// encoding version. Redis stamps the registered version on every value it saves itself,
    /// so only here can a value that an older version describes be written in it, for older
    /// readers; by default, `save_rdb`'s record.
    fn save_portable(&self, sink: &mut impl RdbSink) -> i32 {
        self.save_rdb(sink);
        Self::ENCODING_VERSION
    }

    /// The memory the value holds, in bytes, as MEMORY USAGE reports it.
    fn memory_bytes(&self) -> usize;

    /// A copy, or `None` when there is no memory for it.
    fn try_clone(&self) -> Option<Self>;
}
