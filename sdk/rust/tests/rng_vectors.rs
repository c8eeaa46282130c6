//! The Rng reproduces the published vectors in schemas/rng_vectors.json
//! (the Python side checks the same file).

use tablehost_sdk::{Rng, Value};

fn vectors() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schemas/rng_vectors.json");
    let text = std::fs::read_to_string(path).expect("schemas/rng_vectors.json is readable");
    let doc: Value = tablehost_sdk::serde_json::from_str(&text).expect("valid JSON");
    doc["vectors"].as_array().expect("a vectors list").clone()
}

fn u64s(value: &Value) -> Vec<u64> {
    value.as_array().unwrap().iter().map(|v| v.as_u64().expect("exact u64")).collect()
}

fn seed_of(vector: &Value) -> u64 {
    vector["seed"].as_u64().unwrap()
}

#[test]
fn raw_outputs_match() {
    for vector in vectors() {
        let mut rng = Rng::new(seed_of(&vector));
        let got: Vec<u64> = (0..5).map(|_| rng.next_u64()).collect();
        assert_eq!(got, u64s(&vector["next_u64"]), "seed {}", seed_of(&vector));
    }
}

#[test]
fn below_matches_for_every_bound() {
    let vectors = vectors();
    assert!(vectors.len() >= 4);
    for vector in vectors {
        for case in vector["below"].as_array().unwrap() {
            let n = case["n"].as_u64().unwrap();
            let mut rng = Rng::new(seed_of(&vector));
            let got: Vec<u64> = (0..8).map(|_| rng.below(n)).collect();
            assert_eq!(got, u64s(&case["values"]), "seed {} n {}", seed_of(&vector), n);
        }
    }
}

#[test]
fn roll_and_shuffle_match() {
    for vector in vectors() {
        let mut rng = Rng::new(seed_of(&vector));
        let rolls: Vec<u64> = (0..12).map(|_| rng.roll(6u64)).collect();
        assert_eq!(rolls, u64s(&vector["roll6"]));
        let mut items: Vec<u64> = (0..10).collect();
        Rng::new(seed_of(&vector)).shuffle(&mut items);
        assert_eq!(items, u64s(&vector["shuffle10"]));
    }
}

#[test]
fn bound_types_agree_and_usage_is_recorded() {
    let mut as_usize = Rng::new(9);
    let mut as_u64 = Rng::new(9);
    assert!(!as_usize.used());
    for _ in 0..20 {
        assert_eq!(as_usize.below(52usize) as u64, as_u64.below(52u64));
    }
    assert!(as_usize.used());
    let mut rng = Rng::new(3);
    for _ in 0..200 {
        let value = rng.roll(6);
        assert!((1..=6).contains(&value));
    }
}

#[test]
fn shuffling_one_item_draws_nothing() {
    let mut rng = Rng::new(5);
    rng.shuffle(&mut [1]);
    assert!(!rng.used());
}

#[test]
#[should_panic(expected = "at least 1")]
fn below_zero_panics() {
    Rng::new(1).below(0u32);
}
