//! What a key of a family with a windowed type holds, found with one lookup: the plain value
//! or the windowed one. Each family names its pair once (`held.rs`: `Held<'a>`, `HeldMut<'a>`,
//! `held`, `held_mut`), and each handler matches on it once; a key of any other type answers
//! WRONGTYPE.

use crate::shared::datatype::StoredValue;
use crate::shared::error::CommandError;
use crate::shared::keyspace::{Either, Key};

/// A plain value (`P`) or a windowed one (`W`), borrowed or borrowed mutably.
#[derive(Clone, Copy)]
pub enum Held<P, W> {
    Plain(P),
    Windowed(W),
}

/// The value in the key, `None` for a missing key.
pub fn held<P: StoredValue, W: StoredValue>(key: &Key) -> Result<Option<Held<&P, &W>>, CommandError> {
    Ok(key.get_either::<P, W>()?.map(|value| match value {
        Either::First(plain) => Held::Plain(plain),
        Either::Second(windowed) => Held::Windowed(windowed),
    }))
}

/// As [`held`], to write.
pub fn held_mut<P: StoredValue, W: StoredValue>(
    key: &mut Key,
) -> Result<Option<Held<&mut P, &mut W>>, CommandError> {
    Ok(key.get_either_mut::<P, W>()?.map(|value| match value {
        Either::First(plain) => Held::Plain(plain),
        Either::Second(windowed) => Held::Windowed(windowed),
    }))
}
