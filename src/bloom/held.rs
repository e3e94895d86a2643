//! What a BF.* key holds: a plain filter (`MBbloom--`) or a windowed one (`rbBF-wind`, [`super::window`]), found with one lookup (`window::held`).

use crate::shared::error::CommandError;
use crate::shared::keyspace::Key;
use crate::window::held as either;
use redbloom_core::bloom::window::WindowFilter;
use redbloom_core::bloom::Filter;

pub type Held<'a> = either::Held<&'a Filter, &'a WindowFilter>;
pub type HeldMut<'a> = either::Held<&'a mut Filter, &'a mut WindowFilter>;

pub fn held(key: &Key) -> Result<Option<Held<'_>>, CommandError> {
    either::held(key)
}

pub fn held_mut(key: &mut Key) -> Result<Option<HeldMut<'_>>, CommandError> {
    either::held_mut(key)
}
