//! The counters' width: 1, 2, 4 or 8 bytes a cell, as Redis 8.12's RedisBloom lets
//! CMS.INITBYDIM and CMS.INITBYPROB choose (`CELL_SIZE`, 4 by default, the only width
//! RedisBloom 2.8 has). Every operation on counters is generic over [`Cell`], and a sketch
//! chooses the instance once per call with [`with_cell!`], so the loop over rows knows its
//! width at compile time instead of asking it of every counter.

/// Bytes a counter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellSize {
    /// Counts to 255, in a quarter of the default's memory.
    One,
    /// Counts to 65,535.
    Two,
    /// Counts to 4,294,967,295: RedisBloom 2.8's counters.
    Four,
    /// Counts to `i64::MAX`, in twice the default's memory.
    Eight,
}

impl CellSize {
    /// RedisBloom's width when `CELL_SIZE` is not given, and the only one its records before
    /// encoding version 1 hold.
    pub const DEFAULT: CellSize = CellSize::Four;

    /// The size of `bytes` bytes, if it is one of the four.
    pub fn from_bytes(bytes: u64) -> Option<CellSize> {
        match bytes {
            1 => Some(CellSize::One),
            2 => Some(CellSize::Two),
            4 => Some(CellSize::Four),
            8 => Some(CellSize::Eight),
            _ => None,
        }
    }

    /// Bytes a counter of this size takes: `CELL_SIZE` as CMS.INFO answers it.
    pub const fn bytes(self) -> usize {
        match self {
            CellSize::One => 1,
            CellSize::Two => 2,
            CellSize::Four => 4,
            CellSize::Eight => 8,
        }
    }

    /// The largest count a counter holds: all its bits, but for 8 bytes, whose counts stop at
    /// `i64::MAX` so that every count is a RESP integer, as in RedisBloom 8.12.
    pub const fn max(self) -> u64 {
        match self {
            CellSize::One => u8::MAX as u64,
            CellSize::Two => u16::MAX as u64,
            CellSize::Four => u32::MAX as u64,
            CellSize::Eight => i64::MAX as u64,
        }
    }
}

/// Counters of one width, little-endian in a byte array (which may have come from a file
/// unaligned, so they are read and written as bytes).
pub(super) trait Cell {
    const SIZE: CellSize;
    const BYTES: usize = Self::SIZE.bytes();
    const MAX: u64 = Self::SIZE.max();

    /// Counter `cell` of `counters`. Cells are below `width * depth`, which the array holds:
    /// the 0 for one beyond it never happens.
    fn get(counters: &[u8], cell: usize) -> u64;

    /// Sets counter `cell` to `value`, at most [`Cell::MAX`].
    fn set(counters: &mut [u8], cell: usize, value: u64);

    /// Takes each counter of `part` out of the one at the same place in `counters`, stopping
    /// at 0: one pass over both, written so that the compiler vectorises it (a counter at a
    /// time through [`get`](Self::get) and [`set`](Self::set) made a windowed rotation of a
    /// 2 MB sketch take milliseconds).
    fn subtract_each(counters: &mut [u8], part: &[u8]);
}

macro_rules! cell {
    ($type:ty, $size:expr) => {
        impl Cell for $type {
            const SIZE: CellSize = $size;

            #[inline]
            fn get(counters: &[u8], cell: usize) -> u64 {
                let start = cell * Self::BYTES;
                counters
                    .get(start..start + Self::BYTES)
                    .and_then(|bytes| bytes.try_into().ok())
                    .map_or(0, |bytes| u64::from(<$type>::from_le_bytes(bytes)))
            }

            #[inline]
            fn set(counters: &mut [u8], cell: usize, value: u64) {
                let start = cell * Self::BYTES;
                if let Some(bytes) = counters.get_mut(start..start + Self::BYTES) {
                    // Truncates nothing: the callers keep values within MAX.
                    bytes.copy_from_slice(&(value as $type).to_le_bytes());
                }
            }

            #[inline]
            fn subtract_each(counters: &mut [u8], part: &[u8]) {
                const BYTES: usize = std::mem::size_of::<$type>();
                for (held, less) in counters.chunks_exact_mut(BYTES).zip(part.chunks_exact(BYTES)) {
                    let (Ok(held_bytes), Ok(less_bytes)) =
                        (<[u8; BYTES]>::try_from(&*held), <[u8; BYTES]>::try_from(less))
                    else {
                        continue;
                    };
                    let left =
                        <$type>::from_le_bytes(held_bytes).saturating_sub(<$type>::from_le_bytes(less_bytes));
                    held.copy_from_slice(&left.to_le_bytes());
                }
            }
        }
    };
}

cell!(u8, CellSize::One);
cell!(u16, CellSize::Two);
cell!(u32, CellSize::Four);
cell!(u64, CellSize::Eight);

/// Runs `$body` with `$cell` standing for the counter type of `$size`: one match per call,
/// and a copy of `$body` compiled for each width.
macro_rules! with_cell {
    ($size:expr, $cell:ident => $body:expr) => {
        match $size {
            $crate::count_min::cell::CellSize::One => {
                type $cell = u8;
                $body
            }
            $crate::count_min::cell::CellSize::Two => {
                type $cell = u16;
                $body
            }
            $crate::count_min::cell::CellSize::Four => {
                type $cell = u32;
                $body
            }
            $crate::count_min::cell::CellSize::Eight => {
                type $cell = u64;
                $body
            }
        }
    };
}
pub(super) use with_cell;
