//! How the module presents itself to Redis: its name, version and type, and its commands'
//! flags, keys and documentation.

use crate::harness::*;
use redis::Value;

#[test]
fn module_identity() {
    let server = Server::start();
    let mut con = server.connection();
    let Value::Array(modules) = ok(&mut con, &["MODULE", "LIST"]) else { panic!() };
    let found = modules.iter().any(|module| {
        let text = format!("{module:?}");
        text.contains("\"bf\"") || text.contains("bf")
    });
    assert!(found, "{modules:?}");
    let listing = format!("{modules:?}");
    assert!(listing.contains("20800"), "{listing}");
    ok(&mut con, &["BF.ADD", "k", "a"]);
    assert_eq!(ok(&mut con, &["TYPE", "k"]), simple("MBbloom--"));
}

#[test]
fn commands_are_described_to_redis() {
    let server = Server::start();
    let mut con = server.connection();
    let info = format!("{:?}", ok(&mut con, &["COMMAND", "INFO", "bf.add", "bf.exists", "bf.madd"]));
    assert!(info.contains("write") && info.contains("denyoom") && info.contains("readonly"), "{info}");
    let keys = ok(&mut con, &["COMMAND", "GETKEYS", "BF.MADD", "thekey", "a", "b"]);
    assert_eq!(keys, Value::Array(vec![Value::BulkString(b"thekey".to_vec())]));
}

/// Every command of the module tells COMMAND DOCS its complexity, and its summary.
#[test]
fn command_docs_give_every_command_its_complexity() {
    let server = Server::start();
    let mut con = server.connection();
    let Value::Array(names) = ok(&mut con, &["COMMAND", "LIST", "FILTERBY", "MODULE", "bf"]) else {
        panic!()
    };
    let names: Vec<String> = names.into_iter().map(|name| String::from_utf8(bulk(name)).unwrap()).collect();
    // BF 12, CMS 7, TOPK 8, TDIGEST 15 (a ROTATE command each among them), CF 14.
    assert_eq!(names.len(), 56, "{names:?}");
    for name in names {
        let Value::Array(reply) = ok(&mut con, &["COMMAND", "DOCS", &name]) else { panic!() };
        let Value::Array(doc) = &reply[1] else { panic!("{reply:?}") };
        let field = |wanted: &str| {
            doc.chunks(2)
                .find(|pair| pair[0] == Value::BulkString(wanted.as_bytes().to_vec()))
                .map(|pair| String::from_utf8(bulk(pair[1].clone())).unwrap())
        };
        let complexity = field("complexity").unwrap_or_default();
        assert!(complexity.starts_with("O("), "{name}: complexity {complexity:?}");
        assert!(field("summary").is_some_and(|summary| !summary.is_empty()), "{name}: no summary");
    }
}

/// COMMAND DOCS describes every argument, so that redis-cli's hints and client generators
/// know the commands: names in order, types, tokens, optional and multiple flags.
#[test]
fn command_docs_describe_every_argument() {
    // Each argument as `name:type[:token][:flags]`, nested choices in brackets.
    fn describe(arguments: &[Value]) -> Vec<String> {
        arguments
            .iter()
            .map(|argument| {
                let Value::Array(fields) = argument else { panic!("{argument:?}") };
                let mut parts = Vec::new();
                let mut choices = String::new();
                for pair in fields.chunks(2) {
                    let key = String::from_utf8(bulk(pair[0].clone())).unwrap();
                    match (&*key, &pair[1]) {
                        ("arguments", Value::Array(nested)) => {
                            choices = format!("[{}]", describe(nested).join(" "));
                        }
                        ("flags", Value::Array(flags)) => {
                            parts.push(flags.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>().join(","));
                        }
                        ("name" | "type" | "token", value) => {
                            parts.push(String::from_utf8(bulk(value.clone())).unwrap());
                        }
                        _ => {}
                    }
                }
                parts.join(":") + &choices
            })
            .collect()
    }
    let server = Server::start();
    let mut con = server.connection();
    let expected: [(&str, &str); 30] = [
        ("bf.reserve", "key:key error_rate:double capacity:integer expansion:integer:EXPANSION:simple-string(\"optional\") nonscaling:pure-token:NONSCALING:simple-string(\"optional\") format:oneof:FORMAT:simple-string(\"optional\")[redbloom:pure-token:REDBLOOM redisbloom:pure-token:REDISBLOOM] window:block:WINDOW:simple-string(\"optional\")[ms:integer generations:integer:GENERATIONS:simple-string(\"optional\")]"),
        ("bf.add", "key:key item:string"),
        ("bf.madd", "key:key item:string:simple-string(\"multiple\")"),
        ("bf.insert", "key:key capacity:integer:CAPACITY:simple-string(\"optional\") error:double:ERROR:simple-string(\"optional\") expansion:integer:EXPANSION:simple-string(\"optional\") nocreate:pure-token:NOCREATE:simple-string(\"optional\") nonscaling:pure-token:NONSCALING:simple-string(\"optional\") format:oneof:FORMAT:simple-string(\"optional\")[redbloom:pure-token:REDBLOOM redisbloom:pure-token:REDISBLOOM] window:block:WINDOW:simple-string(\"optional\")[ms:integer generations:integer:GENERATIONS:simple-string(\"optional\")] items:pure-token:ITEMS item:string:simple-string(\"multiple\")"),
        ("bf.exists", "key:key item:string"),
        ("bf.mexists", "key:key item:string:simple-string(\"multiple\")"),
        ("bf.card", "key:key"),
        ("bf.info", "key:key single_value:oneof:simple-string(\"optional\")[capacity:pure-token:CAPACITY size:pure-token:SIZE filters:pure-token:FILTERS items:pure-token:ITEMS expansion:pure-token:EXPANSION error:pure-token:ERROR]"),
        ("bf.debug", "key:key"),
        ("bf.scandump", "key:key iterator:integer"),
        ("bf.loadchunk", "key:key iterator:integer data:string"),
        ("cf.reserve", "key:key capacity:integer bucketsize:integer:BUCKETSIZE:simple-string(\"optional\") maxiterations:integer:MAXITERATIONS:simple-string(\"optional\") expansion:integer:EXPANSION:simple-string(\"optional\") error:double:ERROR:simple-string(\"optional\")"),
        ("cf.add", "key:key item:string"),
        ("cf.addnx", "key:key item:string"),
        ("cf.insert", "key:key capacity:integer:CAPACITY:simple-string(\"optional\") nocreate:pure-token:NOCREATE:simple-string(\"optional\") error:double:ERROR:simple-string(\"optional\") items:pure-token:ITEMS item:string:simple-string(\"multiple\")"),
        ("cf.insertnx", "key:key capacity:integer:CAPACITY:simple-string(\"optional\") nocreate:pure-token:NOCREATE:simple-string(\"optional\") error:double:ERROR:simple-string(\"optional\") items:pure-token:ITEMS item:string:simple-string(\"multiple\")"),
        ("cf.exists", "key:key item:string"),
        ("cf.mexists", "key:key item:string:simple-string(\"multiple\")"),
        ("cf.count", "key:key item:string"),
        ("cf.del", "key:key item:string"),
        ("cf.info", "key:key"),
        ("cf.debug", "key:key"),
        ("cf.compact", "key:key"),
        ("cf.scandump", "key:key iterator:integer"),
        ("cf.loadchunk", "key:key iterator:integer data:string"),
        ("cms.initbydim", "key:key width:integer depth:integer cell_size:integer:CELL_SIZE:simple-string(\"optional\") window:block:WINDOW:simple-string(\"optional\")[ms:integer generations:integer:GENERATIONS:simple-string(\"optional\")]"),
        ("topk.reserve", "key:key topk:integer params:block:simple-string(\"optional\")[width:integer depth:integer decay:double] window:block:WINDOW:simple-string(\"optional\")[ms:integer generations:integer:GENERATIONS:simple-string(\"optional\")]"),
        ("cms.incrby", "key:key items:block:simple-string(\"multiple\")[item:string increment:integer]"),
        ("topk.incrby", "key:key items:block:simple-string(\"multiple\")[item:string increment:integer]"),
        ("tdigest.create", "key:key compression:integer:COMPRESSION:simple-string(\"optional\") window:block:WINDOW:simple-string(\"optional\")[ms:integer generations:integer:GENERATIONS:simple-string(\"optional\")]"),
    ];
    for (command, arguments) in expected {
        let Value::Array(reply) = ok(&mut con, &["COMMAND", "DOCS", command]) else { panic!() };
        let Value::Array(doc) = &reply[1] else { panic!("{reply:?}") };
        let position =
            doc.iter().position(|v| *v == Value::BulkString(b"arguments".to_vec())).expect("arguments");
        let Value::Array(described) = &doc[position + 1] else { panic!() };
        assert_eq!(describe(described).join(" "), arguments, "{command}");
    }
}
