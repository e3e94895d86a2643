//! LOADCHUNK sequences and RDB-style loads, in either format: a header, then chunks at
//! arbitrary iterators.
//! Input: a 2-byte header length, the header, then records of (4-byte offset, 2-byte length,
//! bytes). Chunks either land inside one sub-filter or are refused; nothing panics, and a
//! filter filled in SCANDUMP order dumps back exactly what went in.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom_fuzz::core::bloom::Filter;
use redbloom_fuzz::FUZZ_BUDGET;

fuzz_target!(|data: &[u8]| {
    let Some((length, rest)) = data.split_first_chunk::<2>() else { return };
    let length = u16::from_le_bytes(*length) as usize;
    if rest.len() < length {
        return;
    }
    let (header, mut records) = rest.split_at(length);
    let Ok(mut filter) = Filter::decode_header(header, FUZZ_BUDGET) else { return };

    // The RDB path: every chunk in order, from the bytes that follow.
    let mut loaded = match Filter::decode_header(header, FUZZ_BUDGET) {
        Ok(copy) => copy,
        Err(_) => unreachable!("the same header decoded once already"),
    };
    let mut source = records.iter().copied().cycle();
    for chunk in loaded.chunks_mut() {
        chunk.iter_mut().take(64).for_each(|byte| *byte = source.next().unwrap_or(0));
    }
    // SCANDUMP of it, replayed through LOADCHUNK into `filter`, reproduces it exactly.
    let mut replayed = match Filter::decode_header(header, FUZZ_BUDGET) {
        Ok(copy) => copy,
        Err(_) => unreachable!(),
    };
    let mut offset = 0u64;
    while let Some(chunk) = loaded.chunk_at(offset) {
        replayed.write_chunk(offset, chunk).expect("a chunk SCANDUMP gave");
        offset += chunk.len() as u64;
    }
    assert!(replayed.chunks().map(|(_, c)| c).eq(loaded.chunks().map(|(_, c)| c)));

    // LOADCHUNK with hostile iterators.
    while let Some((record, rest)) = records.split_first_chunk::<6>() {
        let offset = u32::from_le_bytes([record[0], record[1], record[2], record[3]]) as u64;
        let len = (u16::from_le_bytes([record[4], record[5]]) as usize).min(rest.len());
        let (chunk, rest) = rest.split_at(len);
        let _ = filter.write_chunk(offset, chunk);
        let _ = filter.chunk_at(offset);
        records = rest;
    }
    let _ = filter.contains(b"probe");
    let _ = filter.insert(b"probe", || FUZZ_BUDGET);
});
