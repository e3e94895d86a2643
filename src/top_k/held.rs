//! What a TOPK.* key holds: a plain list (`TopK-TYPE`) or a windowed one (`rbTOPKwnd`, [`super::window`]), found with one lookup (`window::held`).

use crate::shared::error::CommandError;
use crate::shared::keyspace::Key;
use crate::window::held as either;
use redbloom_core::top_k::window::WindowTopK;
use redbloom_core::top_k::TopK;

pub type Held<'a> = either::Held<&'a TopK, &'a WindowTopK>;
pub type HeldMut<'a> = either::Held<&'a mut TopK, &'a mut WindowTopK>;

pub fn held(key: &Key) -> Result<Option<Held<'_>>, CommandError> {
    either::held(key)
}

pub fn held_mut(key: &mut Key) -> Result<Option<HeldMut<'_>>, CommandError> {
    either::held_mut(key)
}
