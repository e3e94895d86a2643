//! The catalogue: cuckoo filters of every shape, made by commands, and what each holds.

use super::{assert_same_list, items};
use crate::harness::*;
use redis::{Connection, Value};

/// Bytes that are the same on every run (splitmix64 of `seed`), for the catalogue's binary
/// items; the hostile tests use the harness's printed-seed generator instead.
fn fixed_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

/// How one filter is made: commands run as they are, then items inserted (CF.INSERT, 100 a
/// call), added one by one (CF.ADD: repeats mean copies), added if absent (CF.ADDNX), and
/// deleted (CF.DEL, only of items held, so that no other item loses its fingerprint).
#[derive(Clone, Default)]
pub(super) struct Recipe {
    key: &'static str,
    commands: Vec<Vec<String>>,
    inserted: Vec<Vec<u8>>,
    added: Vec<Vec<u8>>,
    added_nx: Vec<Vec<u8>>,
    deleted: Vec<Vec<u8>>,
}

impl Recipe {
    pub(super) fn new(key: &'static str) -> Recipe {
        Recipe { key, ..Recipe::default() }
    }

    pub(super) fn reserve(self, args: &[&str]) -> Recipe {
        let mut command = vec!["CF.RESERVE", self.key];
        command.extend(args);
        self.command(&command)
    }

    pub(super) fn command(mut self, args: &[&str]) -> Recipe {
        self.commands.push(args.iter().map(std::string::ToString::to_string).collect());
        self
    }

    pub(super) fn insert(mut self, items: Vec<Vec<u8>>) -> Recipe {
        self.inserted.extend(items);
        self
    }

    pub(super) fn add(mut self, items: Vec<Vec<u8>>) -> Recipe {
        self.added.extend(items);
        self
    }

    pub(super) fn add_nx(mut self, items: Vec<Vec<u8>>) -> Recipe {
        self.added_nx.extend(items);
        self
    }

    pub(super) fn delete(mut self, items: Vec<Vec<u8>>) -> Recipe {
        self.deleted.extend(items);
        self
    }
}

/// A filter as it stands on a server: its key and what it holds, a copy per successful add
/// less the copies deleted.
#[derive(Clone, Debug)]
pub(super) struct Held {
    pub(super) key: String,
    pub(super) members: Vec<Vec<u8>>,
}

pub(super) fn held<'a>(all: &'a mut Vec<Held>, key: &str) -> &'a mut Held {
    if let Some(at) = all.iter().position(|held| held.key == key) {
        return &mut all[at];
    }
    all.push(Held { key: key.to_string(), members: Vec::new() });
    all.last_mut().unwrap()
}

/// Runs `recipe` on `con`, keeping `all` up to date; answers every reply in order, so that two
/// servers given the same recipe can be compared reply by reply.
fn cook(con: &mut Connection, recipe: &Recipe, all: &mut Vec<Held>) -> Vec<Result<Value, String>> {
    let key = recipe.key;
    let mut replies = Vec::new();
    for command in &recipe.commands {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        replies.push(call(con, &args));
    }
    let members = &mut held(all, key).members;
    for batch in recipe.inserted.chunks(100) {
        let mut args: Vec<&[u8]> = vec![b"CF.INSERT", key.as_bytes(), b"ITEMS"];
        args.extend(batch.iter().map(Vec::as_slice));
        let reply = call_bytes(con, &args);
        if let Ok(Value::Array(answers)) = &reply {
            assert_eq!(answers.len(), batch.len(), "CF.INSERT {key}");
            for (item, answer) in batch.iter().zip(answers) {
                match answer {
                    Value::Int(1) => members.push(item.clone()),
                    Value::Int(-1) => {}
                    other => panic!("CF.INSERT {key}: {other:?}"),
                }
            }
        }
        replies.push(reply);
    }
    for (command, list) in [("CF.ADD", &recipe.added), ("CF.ADDNX", &recipe.added_nx)] {
        for item in list {
            let reply = call_bytes(con, &[command.as_bytes(), key.as_bytes(), item]);
            if reply == Ok(Value::Int(1)) {
                members.push(item.clone());
            }
            replies.push(reply);
        }
    }
    for item in &recipe.deleted {
        let Some(at) = members.iter().position(|member| member == item) else { continue };
        let reply = call_bytes(con, &[b"CF.DEL", key.as_bytes(), item]);
        if reply == Ok(Value::Int(1)) {
            members.swap_remove(at);
        }
        replies.push(reply);
    }
    replies
}

pub(super) fn cook_all(con: &mut Connection, recipes: &[Recipe], all: &mut Vec<Held>) {
    for recipe in recipes {
        cook(con, recipe, all);
    }
}

/// The same recipes on RedisBloom and on this module must get the same replies.
pub(super) fn cook_on_both(
    reference: &mut Connection,
    tested: &mut Connection,
    recipes: &[Recipe],
    all: &mut Vec<Held>,
) {
    for recipe in recipes {
        let mut theirs = all.clone();
        let expected = cook(reference, recipe, &mut theirs);
        let got = cook(tested, recipe, all);
        assert_same_list(&got, &expected, &format!("making {}", recipe.key));
    }
}

/// Bucket sizes 1, 2 and 4; MAXITERATIONS 3 to 50; EXPANSION 0, 1, 2 and 4; one to twenty
/// sub-filters; deletes with automatic compaction; an empty filter and one emptied by deletes;
/// binary, empty and long items; items added twice and five times; a filter made by
/// CF.INSERTNX; one of 32 MiB (two 16 MiB SCANDUMP chunks).
pub(super) fn catalogue() -> Vec<Recipe> {
    let mut binary: Vec<Vec<u8>> = (0..400).map(|n| fixed_bytes(n, (n * 7 % 65) as usize)).collect();
    binary.extend((0..4).map(|n| fixed_bytes(1000 + n, 5000 * (n as usize + 1))));
    let mut twice = numbered("t", 60);
    twice.extend(numbered("t", 60));
    twice.extend(vec![b"five".to_vec(); 5]);
    let every_third: Vec<Vec<u8>> = numbered("x", 400).into_iter().step_by(3).collect();
    vec![
        // Made by CF.ADD's defaults: capacity 1024, bucket size 2.
        Recipe::new("defaults").add(items(&["first"])).insert(numbered("d", 600)),
        Recipe::new("bucket1")
            .reserve(&["500", "BUCKETSIZE", "1", "MAXITERATIONS", "50"])
            .insert(numbered("b", 1200)),
        Recipe::new("bucket4")
            .reserve(&["100", "BUCKETSIZE", "4", "MAXITERATIONS", "5", "EXPANSION", "2"])
            .insert(numbered("q", 2000)),
        // Never grows: some inserts answer -1, some adds `Filter is full`.
        Recipe::new("full")
            .reserve(&["256", "EXPANSION", "0"])
            .insert(numbered("f", 400))
            .add(numbered("f", 400)),
        // Eight slots a sub-filter: many sub-filters, each of the first one's size.
        Recipe::new("chain").reserve(&["8", "MAXITERATIONS", "3"]).insert(numbered("c", 100)),
        Recipe::new("deletes")
            .reserve(&["64", "EXPANSION", "2"])
            .insert(numbered("x", 400))
            .delete(every_third),
        Recipe::new("empty").reserve(&["100", "BUCKETSIZE", "3", "MAXITERATIONS", "9", "EXPANSION", "0"]),
        Recipe::new("emptied").reserve(&["16"]).insert(numbered("e", 40)).delete(numbered("e", 40)),
        Recipe::new("binary").reserve(&["300", "EXPANSION", "4"]).insert(binary),
        Recipe::new("twice").reserve(&["200"]).add(twice).add_nx(items(&["t1", "t2", "new"])),
        Recipe::new("inserted")
            .command(&["CF.INSERTNX", "inserted", "CAPACITY", "50", "ITEMS", "a", "b", "a", "c"])
            .insert(numbered("n", 150)),
        Recipe::new("large").reserve(&["33554432"]).insert(numbered("g", 3000)),
    ]
}

/// Writes after an AOF rewrite (they reach the AOF as commands): growth, deletes, a
/// compaction, new filters, one of them empty.
pub(super) fn later() -> Vec<Recipe> {
    vec![
        Recipe::new("bucket1").insert(numbered("b-later", 300)),
        Recipe::new("bucket4").delete(numbered("q", 300)),
        Recipe::new("deletes").command(&["CF.COMPACT", "deletes"]),
        Recipe::new("twice").delete(numbered("t", 30)).add(items(&["five"])),
        Recipe::new("late").reserve(&["50", "BUCKETSIZE", "1", "EXPANSION", "2"]).insert(numbered("l", 200)),
        Recipe::new("late-empty").reserve(&["10"]),
        Recipe::new("late-default").add(items(&["only"])),
    ]
}
