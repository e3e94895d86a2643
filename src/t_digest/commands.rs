//! The TDIGEST.* commands as Redis is told of them: name, handler, arity, flags, key use,
//! arguments, complexity and summary. The contract they keep is `docs/tdigest-commands.md`.

use super::{query, update};
use crate::shared::command::{command_table, Command, ADDS, CREATES, DESCRIBES, MERGES, OVERWRITES, READS};
use crate::shared::docs::{argument, keyword, Argument, Kind, KEY, KEY_ONLY, ROTATE_AT, WINDOW};
use crate::window::rotation::rotate_command;
use redbloom_core::t_digest::WindowTDigest;

const CREATE: &[Argument] = &[KEY, keyword(c"compression", c"COMPRESSION", Kind::Integer), WINDOW];
const VALUES: &[Argument] = &[KEY, Argument { multiple: true, ..argument(c"value", Kind::Double) }];
const QUANTILES: &[Argument] = &[KEY, Argument { multiple: true, ..argument(c"quantile", Kind::Double) }];
const RANKS: &[Argument] = &[KEY, Argument { multiple: true, ..argument(c"rank", Kind::Integer) }];
const TRIMMED: &[Argument] =
    &[KEY, argument(c"low_cut_percentile", Kind::Double), argument(c"high_cut_percentile", Kind::Double)];
const MERGE: &[Argument] = &[
    argument(c"destination", Kind::Key),
    argument(c"numkeys", Kind::Integer),
    Argument { multiple: true, ..argument(c"source", Kind::SourceKey) },
    keyword(c"compression", c"COMPRESSION", Kind::Integer),
    keyword(c"override", c"OVERRIDE", Kind::Token),
];

pub const COMMANDS: &[Command] = command_table! {
    category: c"tdigest";
    c"tdigest.create" => update::create {
        arity: -2, flags: c"write deny-oom", keys: CREATES, arguments: CREATE,
        complexity: c"O(1)",
        summary: c"Creates an empty t-digest, or one of a sliding window of time",
    }
    c"tdigest.reset" => update::reset {
        arity: 2, flags: c"write deny-oom", keys: OVERWRITES, arguments: KEY_ONLY,
        complexity: c"O(1)",
        summary: c"Empties a t-digest, keeping its compression",
    }
    c"tdigest.add" => update::add {
        arity: -3, flags: c"write deny-oom", keys: ADDS, arguments: VALUES,
        complexity: c"O(n), amortized, where n is the number of values",
        summary: c"Adds values to a t-digest",
    }
    c"tdigest.merge" => update::merge {
        arity: -4, flags: c"write deny-oom", keys: MERGES, arguments: MERGE,
        complexity: c"O(k * c log c), where k is the number of digests and c the capacity",
        summary: c"Merges t-digests into one",
    }
    c"tdigest.min" => query::min {
        arity: 2, flags: c"readonly fast", keys: READS, arguments: KEY_ONLY,
        complexity: c"O(1)",
        summary: c"Returns the smallest value added",
    }
    c"tdigest.max" => query::max {
        arity: 2, flags: c"readonly fast", keys: READS, arguments: KEY_ONLY,
        complexity: c"O(1)",
        summary: c"Returns the largest value added",
    }
    c"tdigest.quantile" => query::quantile {
        arity: -3, flags: c"readonly", keys: READS, arguments: QUANTILES,
        complexity: c"O(n + c), where n is the number of quantiles and c the number of centroids",
        summary: c"Returns the values at fractions of the observations",
    }
    c"tdigest.cdf" => query::cdf {
        arity: -3, flags: c"readonly", keys: READS, arguments: VALUES,
        complexity: c"O(n * c), where n is the number of values and c the number of centroids",
        summary: c"Returns the fractions of observations at or below values",
    }
    c"tdigest.rank" => query::rank {
        arity: -3, flags: c"readonly", keys: READS, arguments: VALUES,
        complexity: c"O(n * c), where n is the number of values and c the number of centroids",
        summary: c"Returns the estimated ranks of values",
    }
    c"tdigest.revrank" => query::rev_rank {
        arity: -3, flags: c"readonly", keys: READS, arguments: VALUES,
        complexity: c"O(n * c), where n is the number of values and c the number of centroids",
        summary: c"Returns the estimated reverse ranks of values",
    }
    c"tdigest.byrank" => query::by_rank {
        arity: -3, flags: c"readonly", keys: READS, arguments: RANKS,
        complexity: c"O(n * c), where n is the number of ranks and c the number of centroids",
        summary: c"Returns the values at ranks",
    }
    c"tdigest.byrevrank" => query::by_rev_rank {
        arity: -3, flags: c"readonly", keys: READS, arguments: RANKS,
        complexity: c"O(n * c), where n is the number of ranks and c the number of centroids",
        summary: c"Returns the values at reverse ranks",
    }
    c"tdigest.trimmed_mean" => query::trimmed_mean {
        arity: 4, flags: c"readonly", keys: READS, arguments: TRIMMED,
        complexity: c"O(c), where c is the number of centroids",
        summary: c"Returns the mean of the observations between two fractions",
    }
    c"tdigest.info" => query::info {
        arity: 2, flags: c"readonly fast", keys: DESCRIBES, arguments: KEY_ONLY,
        complexity: c"O(1)",
        summary: c"Returns information about a t-digest",
    }
    // Sent by a master to its replicas and the AOF, never by a client: refused otherwise.
    c"tdigest.rotate" => rotate_command::<WindowTDigest> {
        arity: 3, flags: c"write", keys: OVERWRITES, arguments: ROTATE_AT,
        complexity: c"O(g), where g is the number of generations",
        summary: c"Applies a master's rotation of a windowed t-digest (replication only)",
    }
};
