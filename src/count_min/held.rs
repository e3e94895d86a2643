//! What a CMS.* key holds, found with one lookup: a plain sketch (`CMSk-TYPE`) or a windowed
//! one (`rbCMSwind`, [`super::window`]). Each handler matches on it once; a key of any other
//! type answers WRONGTYPE.

use crate::shared::error::CommandError;
use crate::shared::keyspace::{Either, Key};
use redbloom_core::count_min::window::WindowedCountMin;
use redbloom_core::count_min::CountMinSketch;

pub enum Held<'a> {
    Plain(&'a CountMinSketch),
    Windowed(&'a WindowedCountMin),
}

pub enum HeldMut<'a> {
    Plain(&'a mut CountMinSketch),
    Windowed(&'a mut WindowedCountMin),
}

/// The sketch in the key, `None` for a missing key.
pub fn held(key: &Key) -> Result<Option<Held<'_>>, CommandError> {
    Ok(key.get_either::<CountMinSketch, WindowedCountMin>()?.map(|value| match value {
        Either::First(sketch) => Held::Plain(sketch),
        Either::Second(sketch) => Held::Windowed(sketch),
    }))
}

pub fn held_mut(key: &mut Key) -> Result<Option<HeldMut<'_>>, CommandError> {
    Ok(key.get_either_mut::<CountMinSketch, WindowedCountMin>()?.map(|value| match value {
        Either::First(sketch) => HeldMut::Plain(sketch),
        Either::Second(sketch) => HeldMut::Windowed(sketch),
    }))
}
