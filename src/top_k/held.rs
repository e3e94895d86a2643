//! What a TOPK.* key holds, found with one lookup: a plain list (`TopK-TYPE`) or a windowed one
//! (`rbTOPKwnd`, [`super::window`]). Each handler matches on it once; a key of any other type
//! answers WRONGTYPE.

use crate::shared::error::CommandError;
use crate::shared::keyspace::{Either, Key};
use redbloom_core::top_k::window::WindowTopK;
use redbloom_core::top_k::TopK;

pub enum Held<'a> {
    Plain(&'a TopK),
    Windowed(&'a WindowTopK),
}

pub enum HeldMut<'a> {
    Plain(&'a mut TopK),
    Windowed(&'a mut WindowTopK),
}

/// The list in the key, `None` for a missing key.
pub fn held(key: &Key) -> Result<Option<Held<'_>>, CommandError> {
    Ok(key.get_either::<TopK, WindowTopK>()?.map(|value| match value {
        Either::First(sketch) => Held::Plain(sketch),
        Either::Second(sketch) => Held::Windowed(sketch),
    }))
}

pub fn held_mut(key: &mut Key) -> Result<Option<HeldMut<'_>>, CommandError> {
    Ok(key.get_either_mut::<TopK, WindowTopK>()?.map(|value| match value {
        Either::First(sketch) => HeldMut::Plain(sketch),
        Either::Second(sketch) => HeldMut::Windowed(sketch),
    }))
}
