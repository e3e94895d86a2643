//! CMS.MERGE into a windowed sketch, from windowed sources of its shape and schedule:
//! generation by generation, each span's counts the weighted sum of the sources' counts of
//! that span, as the plain merge sums whole sketches.
//!
//! The destination's current span (the master rotated it to its clock, and replicated that)
//! is the merge's time: the sources' generations expired by then are left out, and a
//! source's open generation becomes a closed one of the result when its span is older. The
//! sources are only read, so a replica, holding the same values, computes the same result.

use super::sketch::{Generation, WindowedCountMin};
use crate::bytes::AllocationFailed;
use crate::count_min::cell::{with_cell, Cell};
use crate::count_min::{CountMinSketch, MergeError};
use crate::window::{Generations, Stamped};

/// One source of a windowed merge.
#[derive(Clone, Copy)]
pub enum WindowSource<'a> {
    /// Another windowed sketch.
    Sketch(&'a WindowedCountMin),
    /// The destination itself, as it was before the merge.
    Destination,
}

/// Why a windowed merge changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowMergeError {
    /// What a plain merge refuses: other dimensions or cell size, or a count out of range (in
    /// any generation's counts, or the total's).
    Plain(MergeError),
    /// A source of another window or generations.
    Schedule,
    /// A source whose current span is later than the destination's (a clock set back).
    Ahead,
    /// No memory for the result.
    OutOfMemory,
}

impl From<AllocationFailed> for WindowMergeError {
    fn from(_: AllocationFailed) -> WindowMergeError {
        WindowMergeError::OutOfMemory
    }
}

/// A source's generations as the merge reads them: each live one's slot in the result, and
/// its counts, `None` for the open one (its total less its closed generations).
struct Reading<'a> {
    sketch: &'a WindowedCountMin,
    weight: i64,
    /// Per generation of the source, oldest first: the slot it adds to, if still live.
    slots: Vec<Option<usize>>,
}

impl WindowedCountMin {
    /// Replaces this sketch's counts with the weighted sum of the sources' (this one among
    /// them where named [`WindowSource::Destination`]), span by span. Everything is checked
    /// as it is computed into new sketches, so nothing changes on an error.
    pub fn merge(&mut self, sources: &[(WindowSource<'_>, i64)]) -> Result<(), WindowMergeError> {
        let merged = self.merged(sources)?;
        *self = merged;
        Ok(())
    }

    fn merged(&self, sources: &[(WindowSource<'_>, i64)]) -> Result<WindowedCountMin, WindowMergeError> {
        let now = self.generations.current_start_ms();
        let schedule = *self.schedule();
        let mut starts: Vec<u64> = Vec::new();
        let mut readings = Vec::with_capacity(sources.len());
        for &(source, weight) in sources {
            let sketch = match source {
                WindowSource::Sketch(sketch) => sketch,
                WindowSource::Destination => self,
            };
            if !self.total.same_dimensions(&sketch.total) {
                return Err(WindowMergeError::Plain(MergeError::Dimensions));
            }
            if sketch.cell_size() != self.cell_size() {
                return Err(WindowMergeError::Plain(MergeError::CellSize));
            }
            if sketch.schedule() != self.schedule() {
                return Err(WindowMergeError::Schedule);
            }
            if sketch.generations.current_start_ms() > now {
                return Err(WindowMergeError::Ahead);
            }
            let live =
                sketch.generations.iter().filter(|generation| schedule.expiry_ms(generation.start_ms) > now);
            starts.extend(live.map(|generation| generation.start_ms));
            readings.push((sketch, weight));
        }
        starts.sort_unstable();
        starts.dedup();
        let readings: Vec<Reading<'_>> = readings
            .into_iter()
            .map(|(sketch, weight)| Reading {
                sketch,
                weight,
                slots: sketch
                    .generations
                    .iter()
                    .map(|generation| starts.binary_search(&generation.start_ms).ok())
                    .collect(),
            })
            .collect();

        // The result's generations, every closed one zeroed, laid on the grid as rotations
        // would have; the open one (a span at `now`) holds its counts in the total.
        let empty = || self.total.try_empty_like().ok_or(WindowMergeError::OutOfMemory);
        let mut generations = Generations::new(schedule);
        for &start in &starts {
            generations.rotate(start);
            let open = if start == now { Generation::Open(None) } else { Generation::Counted(empty()?) };
            generations.current_or_open(|| Ok::<_, WindowMergeError>(open))?;
        }
        generations.rotate(now);
        let mut merged = WindowedCountMin { total: empty()?, generations };
        with_cell!(self.cell_size(), C => merged.sum_in::<C>(&readings))?;
        if merged.reserve_needed() {
            let reserve = empty()?;
            if let Some(current) = merged.generations.current_mut() {
                current.value = Generation::Open(Some(reserve));
            }
        }
        Ok(merged)
    }

    /// Fills this (zeroed) result, whose generations are the slots `readings` point to: each
    /// closed generation's counters and count, and the total of every generation's.
    fn sum_in<C: Cell>(&mut self, readings: &[Reading<'_>]) -> Result<(), WindowMergeError> {
        let slots = self.generations.iter().count();
        let overflow = WindowMergeError::Plain(MergeError::Overflow);
        let cells = self.total.counter_bytes().len() / C::BYTES;
        let mut sums = vec![0i64; slots];
        // The counts first (`None` stands for a generation's total count, `Some` a counter).
        for cell in std::iter::once(None).chain((0..cells).map(Some)) {
            sums.fill(0);
            for reading in readings {
                let value = |counts: &CountMinSketch| match cell {
                    None => counts.count(),
                    Some(at) => C::get(counts.counter_bytes(), at),
                };
                let mut open = value(&reading.sketch.total);
                for (generation, slot) in reading.sketch.generations.iter().zip(&reading.slots) {
                    let counts = generation.value.counted().map_or(0, value);
                    open = open.saturating_sub(counts);
                    let counts = if generation.value.counted().is_some() { counts } else { open };
                    if let Some(&slot) = slot.as_ref() {
                        let sum = sums.get_mut(slot).ok_or(overflow)?;
                        let product =
                            i64::try_from(counts).ok().and_then(|counts| counts.checked_mul(reading.weight));
                        *sum = product.and_then(|product| sum.checked_add(product)).ok_or(overflow)?;
                    }
                }
            }
            let max = if cell.is_some() { C::MAX } else { i64::MAX as u64 };
            let mut total = 0u64;
            for (generation, &sum) in self.generations.iter_mut().zip(&sums) {
                let sum = u64::try_from(sum).ok().filter(|&sum| sum <= max).ok_or(overflow)?;
                total = total.checked_add(sum).filter(|&total| total <= max).ok_or(overflow)?;
                if let Stamped { value: Generation::Counted(counts), .. } = generation {
                    store::<C>(counts, cell, sum);
                }
            }
            store::<C>(&mut self.total, cell, total);
        }
        Ok(())
    }
}

/// Sets a counter (`Some`) or the total count (`None`) of `counts`, already checked.
fn store<C: Cell>(counts: &mut CountMinSketch, cell: Option<usize>, value: u64) {
    match cell {
        None => counts.set_count(value),
        Some(at) => C::set(counts.counter_bytes_mut(), at, value),
    }
}
