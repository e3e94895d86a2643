//! What a BF.* key holds, found with one lookup: a plain filter (`MBbloom--`) or a windowed one
//! (`rbBF-wind`, [`super::window`]). Each handler matches on it once; a key of any other type
//! answers WRONGTYPE.

use crate::shared::error::CommandError;
use crate::shared::keyspace::{Either, Key};
use redbloom_core::bloom::window::WindowFilter;
use redbloom_core::bloom::Filter;

pub enum Held<'a> {
    Plain(&'a Filter),
    Windowed(&'a WindowFilter),
}

pub enum HeldMut<'a> {
    Plain(&'a mut Filter),
    Windowed(&'a mut WindowFilter),
}

/// The filter in the key, `None` for a missing key.
pub fn held(key: &Key) -> Result<Option<Held<'_>>, CommandError> {
    Ok(key.get_either::<Filter, WindowFilter>()?.map(|value| match value {
        Either::First(filter) => Held::Plain(filter),
        Either::Second(filter) => Held::Windowed(filter),
    }))
}

pub fn held_mut(key: &mut Key) -> Result<Option<HeldMut<'_>>, CommandError> {
    Ok(key.get_either_mut::<Filter, WindowFilter>()?.map(|value| match value {
        Either::First(filter) => HeldMut::Plain(filter),
        Either::Second(filter) => HeldMut::Windowed(filter),
    }))
}
