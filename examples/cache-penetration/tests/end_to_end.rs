//! A short run of the example on real servers (PostgreSQL, Redis with the freshly built
//! redbloom, the service): IDs that were never created cost the database nothing beyond the
//! filter's false positives, existing users are served right, creation and deletion keep the
//! filter and the cache in step, and a rebuild under traffic answers every request.

use cache_penetration::demo::client::HttpClient;
use cache_penetration::demo::load::{self, pick_users, Traffic, NEVER_CREATED};
use cache_penetration::demo::random::Random;
use cache_penetration::demo::servers::{database_lookups, seeded_user_json, Stack};
use cache_penetration::Error;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

const ROWS: u64 = 100_000;
const FILTER: &str = "users:ids";

#[test]
fn cache_penetration_end_to_end() -> Result<(), Error> {
    let seed = match std::env::var("REDBLOOM_SEED") {
        Ok(seed) => seed.parse()?,
        Err(_) => Random::seed_from_clock(),
    };
    println!("REDBLOOM_SEED={seed}");
    let mut random = Random::new(seed);
    let mut stack = Stack::start(ROWS, Path::new(env!("CARGO_BIN_EXE_users-service")))?;
    let address = stack.start_service(true)?.address.clone();
    let mut http = HttpClient::new(&address);
    let mut db = stack.postgres.connect()?;
    let mut redis = stack.redis.connect()?;

    let all_ids: Vec<u64> = (1..=ROWS).collect();
    assert_eq!(
        filter_passes(&mut redis, &all_ids)?.len() as u64,
        ROWS,
        "the filter built at start holds every user"
    );

    existing_users_come_from_the_database_then_the_cache(&mut http, &mut db, &mut random)?;
    never_created_ids_reach_the_database_only_as_false_positives(
        &mut http,
        &mut db,
        &mut redis,
        &mut random,
    )?;
    let deleted = creation_and_deletion_keep_filter_and_cache_in_step(&mut http, &mut redis, &mut random)?;
    a_rebuild_under_traffic_answers_every_request(&stack, &address, deleted, seed)?;
    Ok(())
}

fn existing_users_come_from_the_database_then_the_cache(
    http: &mut HttpClient,
    db: &mut postgres::Client,
    random: &mut Random,
) -> Result<(), Error> {
    let users = pick_users(ROWS, 300, random);
    let lookups_before = database_lookups(db)?;
    let metrics_before = http.metrics()?;
    for _round in 0..2 {
        for &id in &users {
            let reply = http.get(&format!("/users/{id}"))?;
            assert_eq!((reply.status, reply.body), (200, seeded_user_json(id)), "user {id}");
        }
    }
    assert_eq!(
        database_lookups(db)? - lookups_before,
        users.len() as u64,
        "one query per user, the second round from the cache"
    );
    assert_eq!(growth(&metrics_before, &http.metrics()?, "cache_hits_total"), users.len() as f64);
    Ok(())
}

fn never_created_ids_reach_the_database_only_as_false_positives(
    http: &mut HttpClient,
    db: &mut postgres::Client,
    redis: &mut redis::Connection,
    random: &mut Random,
) -> Result<(), Error> {
    // The filter is far from full, so false positives are rare: find some among many IDs,
    // asking Redis directly, so that their path (a query, then a negative entry) is tested too.
    let candidates: Vec<u64> =
        (0..300_000).map(|_| random.between(NEVER_CREATED.start, NEVER_CREATED.end)).collect();
    let mut false_positives = filter_passes(redis, &candidates)?;
    false_positives.sort_unstable();
    assert!(
        !false_positives.is_empty() && false_positives.len() < candidates.len() / 100,
        "{} false positives among {} IDs never created",
        false_positives.len(),
        candidates.len()
    );
    let mut requested: Vec<u64> = candidates[..3000].to_vec();
    requested.extend(&false_positives);
    requested.sort_unstable();
    requested.dedup();
    let expected_queries = requested.iter().filter(|id| false_positives.binary_search(id).is_ok()).count();

    let lookups_before = database_lookups(db)?;
    let metrics_before = http.metrics()?;
    for &id in &requested {
        assert_eq!(http.get(&format!("/users/{id}"))?.status, 404, "ID {id} was never created");
    }
    assert_eq!(
        database_lookups(db)? - lookups_before,
        expected_queries as u64,
        "PostgreSQL ran one query per false positive, none for the IDs the filter rejected"
    );
    let metrics = http.metrics()?;
    assert_eq!(
        growth(&metrics_before, &metrics, "filter_rejections_total"),
        (requested.len() - expected_queries) as f64
    );
    assert_eq!(growth(&metrics_before, &metrics, "database_misses_total"), expected_queries as f64);

    let lookups_before = database_lookups(db)?;
    for &id in &false_positives {
        assert_eq!(http.get(&format!("/users/{id}"))?.status, 404);
    }
    assert_eq!(
        database_lookups(db)?,
        lookups_before,
        "false positives asked again come from the negative cache entries"
    );
    Ok(())
}

/// Answers the users it deleted, sorted.
fn creation_and_deletion_keep_filter_and_cache_in_step(
    http: &mut HttpClient,
    redis: &mut redis::Connection,
    random: &mut Random,
) -> Result<Vec<u64>, Error> {
    let reply = http.send("POST", "/users", "name=Ada+Lovelace&email=ada%40example.com")?;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let id = id_of(&reply.body)?;
    assert!(id > ROWS, "new users get IDs after the seeded ones, not {id}");
    let expected = format!(r#"{{"id":{id},"name":"Ada Lovelace","email":"ada@example.com"}}"#);
    assert_eq!(reply.body, expected);
    assert_eq!(filter_passes(redis, &[id])?, [id], "the filter was told of the new user");
    let reply = http.get(&format!("/users/{id}"))?;
    assert_eq!((reply.status, reply.body), (200, expected));
    assert_eq!(http.send("POST", "/users", "name=no+email")?.status, 400);

    let deleted = pick_users(ROWS, 500, random);
    for &id in &deleted {
        // Cached first, so that the deletion must remove the cache entry.
        assert_eq!(http.get(&format!("/users/{id}"))?.status, 200);
        assert_eq!(http.send("DELETE", &format!("/users/{id}"), "")?.status, 204, "DELETE /users/{id}");
        assert_eq!(http.get(&format!("/users/{id}"))?.status, 404, "user {id} was deleted");
    }
    assert_eq!(http.send("DELETE", &format!("/users/{}", deleted[0]), "")?.status, 404);
    assert_eq!(
        filter_passes(redis, &deleted)?,
        deleted,
        "a Bloom filter cannot forget: the deleted IDs stay in it"
    );
    Ok(deleted)
}

fn a_rebuild_under_traffic_answers_every_request(
    stack: &Stack,
    address: &str,
    deleted: Vec<u64>,
    seed: u64,
) -> Result<(), Error> {
    let traffic = Traffic {
        rate: 600.0,
        clients: 4,
        duration: Duration::from_secs(4),
        attack_share: 0.4,
        deleted_share: 0.1,
        rows: ROWS,
        deleted: Arc::new(deleted.clone()),
        seed,
    };
    // Users are created all along the rebuild too: those created while it scans the table must
    // end up in the new filter.
    let creating = AtomicBool::new(true);
    let (report, rebuild) = load::run(address, &traffic, |started| {
        thread::scope(|scope| -> Result<_, Error> {
            let creator = scope.spawn(|| -> Result<Vec<u64>, Error> {
                let mut http = HttpClient::new(address);
                let mut created = Vec::new();
                while creating.load(Ordering::Relaxed) {
                    let reply = http.send("POST", "/users", "name=Grace&email=grace%40example.com")?;
                    assert_eq!(reply.status, 201, "{}", reply.body);
                    created.push(id_of(&reply.body)?);
                    thread::sleep(Duration::from_millis(5));
                }
                Ok(created)
            });
            thread::sleep((started + Duration::from_secs(1)).saturating_duration_since(Instant::now()));
            let from = started.elapsed();
            let status = stack.service_command(true).arg("rebuild-filter").status();
            let to = started.elapsed();
            thread::sleep(Duration::from_millis(200));
            // Before anything can fail here: the scope waits for the creator, which would
            // otherwise create users forever.
            creating.store(false, Ordering::Relaxed);
            let created = creator.join().map_err(|_| "the creating thread panicked")??;
            let status = status?;
            assert!(status.success(), "users-service rebuild-filter: {status}");
            Ok((from, to, created))
        })
    })?;
    let (rebuild_from, rebuild_to, created) = rebuild?;

    assert_eq!(
        (report.errors, report.wrong),
        (0, 0),
        "every request answered, and rightly: {:?}",
        report.problems
    );
    let window = rebuild_to - rebuild_from;
    let answered_during =
        report.answers.iter().filter(|answer| (rebuild_from..=rebuild_to).contains(&answer.at)).count();
    assert!(
        answered_during as f64 >= traffic.rate * window.as_secs_f64() / 4.0,
        "only {answered_during} answers during the {window:?} of the rebuild, at {} requests per second",
        traffic.rate
    );
    let silence = report.longest_silence(rebuild_from, rebuild_to);
    assert!(silence < Duration::from_millis(500), "{silence:?} without an answer during the rebuild");

    let mut redis = stack.redis.connect()?;
    let mut db = stack.postgres.connect()?;
    let table: Vec<u64> = db
        .query("SELECT id FROM users", &[])?
        .iter()
        .map(|row| row.try_get::<_, i64>(0).map(|id| id as u64))
        .collect::<Result<_, _>>()?;
    assert!(created.len() > 10, "only {} users created during the rebuild", created.len());
    assert_eq!(
        filter_passes(&mut redis, &table)?.len(),
        table.len(),
        "every user in the table is in the rebuilt filter"
    );
    let mut http = HttpClient::new(address);
    for &id in &created {
        assert_eq!(http.get(&format!("/users/{id}"))?.status, 200, "user {id}, created during the rebuild");
    }
    let forgotten = deleted.len() - filter_passes(&mut redis, &deleted)?.len();
    assert!(
        forgotten >= deleted.len() * 95 / 100,
        "the rebuilt filter still lets {} of {} deleted users through",
        deleted.len() - forgotten,
        deleted.len()
    );
    Ok(())
}

/// The IDs among `ids` the filter answers "maybe" for, in order.
fn filter_passes(redis: &mut redis::Connection, ids: &[u64]) -> Result<Vec<u64>, Error> {
    let mut passes = Vec::new();
    for batch in ids.chunks(10_000) {
        let answers: Vec<bool> = redis::cmd("BF.MEXISTS").arg(FILTER).arg(batch).query(redis)?;
        passes.extend(batch.iter().zip(answers).filter(|&(_, maybe)| maybe).map(|(&id, _)| id));
    }
    Ok(passes)
}

fn growth(before: &HashMap<String, f64>, after: &HashMap<String, f64>, counter: &str) -> f64 {
    after.get(counter).copied().unwrap_or(f64::NAN) - before.get(counter).copied().unwrap_or(f64::NAN)
}

/// The ID in a user's JSON.
fn id_of(json: &str) -> Result<u64, Error> {
    let digits = json.strip_prefix(r#"{"id":"#).and_then(|rest| rest.split(',').next());
    Ok(digits.ok_or_else(|| format!("no id in {json}"))?.parse()?)
}
