//! Doubles in replies spelled byte for byte as the server spells its own: on Redis 7.0 a RESP2
//! double is a bulk string of glibc's `%.17g`, which the module spells itself (it is most of
//! a TDIGEST.QUANTILE's cost in glibc); elsewhere the server spells the module's doubles.
//! The reference is ZSCORE, the server's own double reply, and, for the negative zero ZADD
//! does not keep and the NaN it refuses, a Lua script's double.

use crate::harness::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// A connection on a plain socket, for replies as the bytes the server sent: a client library
/// reads a double into a number, and its spelling is what is checked.
struct RawConnection {
    reader: BufReader<TcpStream>,
}

impl RawConnection {
    fn open(server: &Server, resp: u8) -> RawConnection {
        let stream = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
        let mut con = RawConnection { reader: BufReader::new(stream) };
        let hello = con.reply(&["HELLO", &resp.to_string()]);
        assert!(!hello.starts_with(b"-"), "{}", String::from_utf8_lossy(&hello));
        con
    }

    /// One command's whole reply, as sent.
    fn reply(&mut self, args: &[&str]) -> Vec<u8> {
        let mut request = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            request.extend(format!("${}\r\n{arg}\r\n", arg.len()).bytes());
        }
        self.reader.get_mut().write_all(&request).expect("send");
        let mut reply = Vec::new();
        self.read_value(&mut reply);
        reply
    }

    fn read_value(&mut self, reply: &mut Vec<u8>) {
        let start = reply.len();
        self.reader.read_until(b'\n', reply).expect("read a reply");
        let line = String::from_utf8_lossy(&reply[start..]).trim_end().to_string();
        let (kind, count) = line.split_at(1);
        let count: i64 = count.parse().unwrap_or(-1);
        match kind {
            "$" | "=" | "!" if count >= 0 => {
                let mut payload = vec![0; count as usize + 2];
                self.reader.read_exact(&mut payload).expect("read a bulk string");
                reply.extend(payload);
            }
            "*" | "~" | ">" => (0..count).for_each(|_| self.read_value(reply)),
            "%" | "|" => (0..2 * count).for_each(|_| self.read_value(reply)),
            _ => {}
        }
    }
}

/// Values whose `%.17g` is easy to get wrong: both notations and the exponents where they
/// change (1e-4, 1e17), the subnormals and the ends of the doubles, decimals a double cannot
/// hold, 18-digit halves that round to even, whole numbers, and the neighbours of each.
fn tricky_values() -> Vec<f64> {
    let centres = [
        0.1,
        0.2,
        1.0 / 3.0,
        2.0 / 3.0,
        0.5,
        1.0,
        6.0,
        123_456.789,
        1e-7,
        1e-5,
        1e-4,
        1e15,
        1e16,
        1e17,
        1e22,
        1e-300,
        1e300,
        f64::from_bits(1),
        f64::MIN_POSITIVE,
        f64::MAX,
        9_007_199_254_740_993.0,
        // 1049 / 2^20 and 2^-25: exactly 18 significant digits, the last a 5.
        1049.0 / 1_048_576.0,
        1.0 / 33_554_432.0,
    ];
    let mut values = Vec::new();
    for centre in centres {
        for value in [centre.next_down(), centre, centre.next_up()] {
            if value.is_finite() && value != 0.0 {
                values.extend([value, -value]);
            }
        }
    }
    values
}

#[test]
fn doubles_are_spelled_as_the_server_spells_its_own() {
    let server = Server::start();
    let values = tricky_values();
    let mut con = server.connection();
    for (index, value) in values.iter().enumerate() {
        let text = format!("{value:?}");
        ok(&mut con, &["TDIGEST.CREATE", &format!("d{index}")]);
        ok(&mut con, &["TDIGEST.ADD", &format!("d{index}"), &text]);
        ok(&mut con, &["ZADD", &format!("z{index}"), &text, "m"]);
    }
    ok(&mut con, &["TDIGEST.CREATE", "empty"]);
    ok(&mut con, &["TDIGEST.CREATE", "negative zero"]);
    ok(&mut con, &["TDIGEST.ADD", "negative zero", "-0"]);
    ok(&mut con, &["ZADD", "infinities", "inf", "high", "-inf", "low"]);
    for resp in [2, 3] {
        let mut raw = RawConnection::open(&server, resp);
        for (index, value) in values.iter().enumerate() {
            let ours = raw.reply(&["TDIGEST.MIN", &format!("d{index}")]);
            let servers = raw.reply(&["ZSCORE", &format!("z{index}"), "m"]);
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&servers),
                "RESP{resp} {value:?}"
            );
        }
        // BYRANK past the last rank answers inf, BYREVRANK -inf, each in an array of one.
        for (command, member) in [("TDIGEST.BYRANK", "high"), ("TDIGEST.BYREVRANK", "low")] {
            let ours = raw.reply(&[command, "d0", "100"]);
            let mut servers = b"*1\r\n".to_vec();
            servers.extend(raw.reply(&["ZSCORE", "infinities", member]));
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&servers),
                "RESP{resp} {command}"
            );
        }
        for (key, script) in
            [("empty", "return {double=math.abs(0/0)}"), ("negative zero", "return {double=-1/math.huge}")]
        {
            let ours = raw.reply(&["TDIGEST.MIN", key]);
            let servers = raw.reply(&["EVAL", script, "0"]);
            assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&servers), "RESP{resp} {key}");
        }
    }
}

/// Doubles in arguments are read as RedisBloom reads them on this server: by the server's own
/// reader, which on Redis takes C's hexadecimal forms and refuses what is out of range (even
/// `1e-400`, which would read as 0), and on Valkey takes no hexadecimal. Each text goes to
/// every command that reads a double, here and in RedisBloom on a server of the same binary,
/// and the replies must be the same.
#[test]
fn doubles_in_arguments_are_read_as_redisbloom_reads_them() {
    let ours = Server::start();
    let theirs = Server::start_redisbloom(&[]);
    let texts = [
        "0x1p-3",
        "0X.8",
        "-0x.8p1",
        "0x1.8",
        "0x",
        "0x1p",
        "1e-400",
        "-1e-400",
        "1e400",
        "1e-310",
        "0e-400",
        "0",
        "-0",
        "0.000",
        "+0.5",
        ".5",
        "5.",
        "1E-2",
        "inf",
        "-infinity",
        "nan",
        " 0.5",
        "0.5 ",
        "1e",
        "",
    ];
    for (index, text) in texts.iter().enumerate() {
        // A key of its own for each creation: one that exists is refused before its numbers
        // are read.
        let keys = ["error", "probability", "decay", "rate"].map(|read| format!("{read}:{index}"));
        let commands: [Vec<&str>; 5] = [
            vec!["TDIGEST.ADD", "digest", text],
            vec!["CMS.INITBYPROB", &keys[0], text, "0.5"],
            vec!["CMS.INITBYPROB", &keys[1], "0.01", text],
            vec!["TOPK.RESERVE", &keys[2], "5", "100", "4", text],
            vec!["BF.RESERVE", &keys[3], text, "100"],
        ];
        let replies = [&ours, &theirs].map(|server| {
            let mut con = server.connection();
            call(&mut con, &["TDIGEST.CREATE", "digest"]).ok();
            let mut replies: Vec<String> =
                commands.iter().map(|command| format!("{:?}", call(&mut con, command))).collect();
            // BF.RESERVE's out-of-range error is RedisBloom 8's text here (docs/bf-commands.md),
            // 2.8.2's there: whether the rate was read is what is compared.
            if let Some(bloom) = replies.last_mut() {
                *bloom = bloom.replace(
                    "(0 < error rate range < 1) ",
                    "error rate must be in the range (0.000000, 1.000000)",
                );
            }
            replies
        });
        assert_eq!(replies[0], replies[1], "{text:?}");
    }
}
