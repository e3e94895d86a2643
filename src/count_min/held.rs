//! What a CMS.* key holds: a plain sketch (`CMSk-TYPE`) or a windowed one (`rbCMSwind`, [`super::window`]), found with one lookup (`window::held`).

use crate::shared::error::CommandError;
use crate::shared::keyspace::Key;
use crate::window::held as either;
use redbloom_core::count_min::window::WindowedCountMin;
use redbloom_core::count_min::CountMinSketch;

pub type Held<'a> = either::Held<&'a CountMinSketch, &'a WindowedCountMin>;
pub type HeldMut<'a> = either::Held<&'a mut CountMinSketch, &'a mut WindowedCountMin>;

pub fn held(key: &Key) -> Result<Option<Held<'_>>, CommandError> {
    either::held(key)
}

pub fn held_mut(key: &mut Key) -> Result<Option<HeldMut<'_>>, CommandError> {
    either::held_mut(key)
}
