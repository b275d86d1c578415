//! `b2nd info`: what a frame is and holds, as text or JSON.

use clap::Args;
use serde_json::{json, Map, Value};

use b2nd_core::chunk::{ChunkHeader, Special};
use b2nd_core::codecs::names::codec_name;
use b2nd_core::filters::names::filter_name;
use b2nd_core::frame::{ChunkLoc, SpecialOffset};
use b2nd_core::schunk::SChunk;

use crate::fail::{Context, Failure};
use crate::input::{self, Input};
use crate::InputArgs;

#[derive(Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Add one entry per chunk (special kind, compressed size, ratio).
    #[arg(long)]
    pub chunks: bool,
}

fn ratio(nbytes: i64, cbytes: i64) -> f64 {
    if cbytes > 0 {
        nbytes as f64 / cbytes as f64
    } else {
        0.0
    }
}

/// Filter names of a pipeline, the empty slots left out.
fn filter_names(filters: &[u8]) -> Vec<String> {
    filters
        .iter()
        .filter(|&&f| f != 0)
        .map(|&f| filter_name(f).map_or_else(|| format!("filter{f}"), str::to_string))
        .collect()
}

fn special_name(s: Option<Special>) -> &'static str {
    match s {
        None => "none",
        Some(Special::Zero) => "zero",
        Some(Special::Nan) => "nan",
        Some(Special::Value) => "value",
        Some(Special::Uninit) => "uninit",
    }
}

/// One entry per chunk; chunks the index stores as special offsets take no
/// bytes (csize 0).
fn chunk_entries(sc: &mut SChunk) -> Result<Vec<Value>, Failure> {
    let offsets = sc.frame_offsets().or_fail("reading the offsets index")?;
    let mut out = Vec::new();
    for n in 0..sc.nchunks() {
        let index_special = offsets
            .as_ref()
            .and_then(|o| o.get(n as usize))
            .and_then(|&e| match ChunkLoc::decode(e) {
                Ok(ChunkLoc::Special(s)) => Some(s),
                _ => None,
            });
        let entry = match sc.get_chunk(n) {
            Ok(chunk) => match ChunkHeader::parse(&chunk) {
                Ok(h) => {
                    let csize = if index_special.is_some() {
                        0
                    } else {
                        h.cbytes()
                    };
                    let kind = match index_special {
                        Some(SpecialOffset::Zero) => "zero",
                        Some(SpecialOffset::Nan) => "nan",
                        Some(SpecialOffset::Uninit) => "uninit",
                        None => special_name(h.special()),
                    };
                    json!({
                        "n": n, "special": kind, "nbytes": h.nbytes(), "cbytes": csize,
                        "ratio": ratio(h.nbytes() as i64, csize as i64),
                    })
                }
                Err(e) => json!({"n": n, "error": e.to_string()}),
            },
            Err(e) => json!({"n": n, "error": e.to_string()}),
        };
        out.push(entry);
    }
    Ok(out)
}

fn collect(args: &InfoArgs) -> Result<Map<String, Value>, Failure> {
    let mut input = input::open(&args.input)?;
    let header = input::read_header(&args.input);
    let mut m = Map::new();
    let kind = match &input {
        Input::Array(_) => "array",
        Input::Schunk(_) => "schunk",
    };
    m.insert("kind".into(), json!(kind));
    let storage = if args.input.path.is_dir() {
        "sparse"
    } else {
        "contiguous"
    };
    m.insert("storage".into(), json!(storage));
    m.insert("offset".into(), json!(args.input.offset));
    m.insert("version".into(), json!(header.map(|h| h.version)));
    let sc_part = input::with_schunk(&mut input, |sc| {
        let cp = sc.cparams().clone();
        let metalayers: Vec<Value> = sc
            .metalayers()
            .iter()
            .map(|l| json!({"name": l.name, "size": l.content.len()}))
            .collect();
        let vlmetalayers: Vec<Value> = sc
            .vlmeta_names()
            .into_iter()
            .map(|name| {
                let size = sc.vlmeta_get(&name).map(|v| v.len()).ok();
                json!({"name": name, "size": size})
            })
            .collect();
        Ok(json!({
                "nchunks": sc.nchunks(),
                "nbytes": sc.nbytes(),
                "cbytes": sc.cbytes(),
                "ratio": ratio(sc.nbytes(), sc.cbytes()),
                "typesize": sc.typesize(),
                "chunksize": sc.chunksize(),
                "blocksize": sc.blocksize(),
                "codec": codec_name(cp.compcode).map_or_else(|| format!("codec{}", cp.compcode), str::to_string),
                "clevel": cp.clevel,
                "filters": filter_names(&cp.filters),
                "metalayers": metalayers,
                "vlmetalayers": vlmetalayers,
        }))
    })
    .or_fail("reading the super-chunk")?;
    if let Value::Object(o) = sc_part {
        m.extend(o);
    }
    if let Input::Array(a) = &input {
        m.insert("shape".into(), json!(a.shape()));
        m.insert("chunkshape".into(), json!(a.chunkshape()));
        m.insert("blockshape".into(), json!(a.blockshape()));
        m.insert("dtype".into(), json!(a.dtype()));
    }
    if args.chunks {
        let entries = input::with_schunk(&mut input, |sc| Ok(chunk_entries(sc)))
            .or_fail("reading the chunks")??;
        m.insert("chunks".into(), Value::Array(entries));
    }
    Ok(m)
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format!("{f:.2}"),
            _ => n.to_string(),
        },
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(text).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(_) => v.to_string(),
        Value::Bool(b) => b.to_string(),
    }
}

fn print_text(m: &Map<String, Value>) {
    let order = [
        "kind",
        "storage",
        "offset",
        "version",
        "shape",
        "chunkshape",
        "blockshape",
        "dtype",
        "nchunks",
        "nbytes",
        "cbytes",
        "ratio",
        "typesize",
        "chunksize",
        "blocksize",
        "codec",
        "clevel",
        "filters",
    ];
    for key in order {
        if let Some(v) = m.get(key) {
            println!("{key:<12} {}", text(v));
        }
    }
    for key in ["metalayers", "vlmetalayers"] {
        let layers = m
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        println!("{key:<12} {}", layers.len());
        for l in layers {
            println!("  {:<20} {} bytes", text(&l["name"]), text(&l["size"]));
        }
    }
    if let Some(chunks) = m.get("chunks").and_then(Value::as_array) {
        println!("chunks");
        for c in chunks {
            match c.get("error") {
                Some(e) => println!("  {:>6}  error: {}", text(&c["n"]), text(e)),
                None => println!(
                    "  {:>6}  special {:<6}  csize {:>10}  ratio {}",
                    text(&c["n"]),
                    text(&c["special"]),
                    text(&c["cbytes"]),
                    text(&c["ratio"])
                ),
            }
        }
    }
}

pub fn run(args: &InfoArgs) -> Result<u8, Failure> {
    let m = collect(args)?;
    if args.json {
        let s = serde_json::to_string_pretty(&Value::Object(m)).or_fail("writing JSON")?;
        println!("{s}");
    } else {
        print_text(&m);
    }
    Ok(0)
}
