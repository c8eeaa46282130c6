//! The classic world map: 42 territories in 6 continents, their borders and
//! the continent bonuses (North America 5, South America 2, Europe 5,
//! Africa 3, Asia 7, Australia 2). A territory is named by its index into
//! [`TERRITORIES`]; its space id is its `id` (`"north-africa"`).

/// A continent: its id, its name and the armies its owner receives each turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Continent {
    pub id: &'static str,
    pub name: &'static str,
    pub bonus: u32,
}

/// The six continents, in the order of [`TERRITORIES`].
pub const CONTINENTS: [Continent; 6] = [
    Continent { id: "north-america", name: "North America", bonus: 5 },
    Continent { id: "south-america", name: "South America", bonus: 2 },
    Continent { id: "europe", name: "Europe", bonus: 5 },
    Continent { id: "africa", name: "Africa", bonus: 3 },
    Continent { id: "asia", name: "Asia", bonus: 7 },
    Continent { id: "australia", name: "Australia", bonus: 2 },
];

/// A territory: its space id, its name, and its continent's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Territory {
    pub id: &'static str,
    pub name: &'static str,
    pub continent: usize,
}

const fn t(id: &'static str, name: &'static str, continent: usize) -> Territory {
    Territory { id, name, continent }
}

/// The 42 territories, continent by continent.
pub const TERRITORIES: [Territory; 42] = [
    t("alaska", "Alaska", 0),
    t("northwest-territory", "Northwest Territory", 0),
    t("greenland", "Greenland", 0),
    t("alberta", "Alberta", 0),
    t("ontario", "Ontario", 0),
    t("quebec", "Quebec", 0),
    t("western-united-states", "Western United States", 0),
    t("eastern-united-states", "Eastern United States", 0),
    t("central-america", "Central America", 0),
    t("venezuela", "Venezuela", 1),
    t("peru", "Peru", 1),
    t("brazil", "Brazil", 1),
    t("argentina", "Argentina", 1),
    t("iceland", "Iceland", 2),
    t("scandinavia", "Scandinavia", 2),
    t("ukraine", "Ukraine", 2),
    t("great-britain", "Great Britain", 2),
    t("northern-europe", "Northern Europe", 2),
    t("western-europe", "Western Europe", 2),
    t("southern-europe", "Southern Europe", 2),
    t("north-africa", "North Africa", 3),
    t("egypt", "Egypt", 3),
    t("east-africa", "East Africa", 3),
    t("congo", "Congo", 3),
    t("south-africa", "South Africa", 3),
    t("madagascar", "Madagascar", 3),
    t("ural", "Ural", 4),
    t("siberia", "Siberia", 4),
    t("yakutsk", "Yakutsk", 4),
    t("kamchatka", "Kamchatka", 4),
    t("irkutsk", "Irkutsk", 4),
    t("mongolia", "Mongolia", 4),
    t("japan", "Japan", 4),
    t("afghanistan", "Afghanistan", 4),
    t("china", "China", 4),
    t("middle-east", "Middle East", 4),
    t("india", "India", 4),
    t("siam", "Siam", 4),
    t("indonesia", "Indonesia", 5),
    t("new-guinea", "New Guinea", 5),
    t("western-australia", "Western Australia", 5),
    t("eastern-australia", "Eastern Australia", 5),
];

/// Every border once (83), by space id; borders cross oceans where the
/// classic board draws a sea line (Alaska-Kamchatka, Brazil-North Africa...).
pub const BORDERS: [(&str, &str); 83] = [
    ("alaska", "northwest-territory"),
    ("alaska", "alberta"),
    ("alaska", "kamchatka"),
    ("northwest-territory", "alberta"),
    ("northwest-territory", "ontario"),
    ("northwest-territory", "greenland"),
    ("greenland", "ontario"),
    ("greenland", "quebec"),
    ("greenland", "iceland"),
    ("alberta", "ontario"),
    ("alberta", "western-united-states"),
    ("ontario", "western-united-states"),
    ("ontario", "eastern-united-states"),
    ("ontario", "quebec"),
    ("quebec", "eastern-united-states"),
    ("western-united-states", "eastern-united-states"),
    ("western-united-states", "central-america"),
    ("eastern-united-states", "central-america"),
    ("central-america", "venezuela"),
    ("venezuela", "peru"),
    ("venezuela", "brazil"),
    ("peru", "brazil"),
    ("peru", "argentina"),
    ("brazil", "argentina"),
    ("brazil", "north-africa"),
    ("iceland", "great-britain"),
    ("iceland", "scandinavia"),
    ("scandinavia", "great-britain"),
    ("scandinavia", "northern-europe"),
    ("scandinavia", "ukraine"),
    ("ukraine", "northern-europe"),
    ("ukraine", "southern-europe"),
    ("ukraine", "ural"),
    ("ukraine", "afghanistan"),
    ("ukraine", "middle-east"),
    ("great-britain", "northern-europe"),
    ("great-britain", "western-europe"),
    ("northern-europe", "southern-europe"),
    ("northern-europe", "western-europe"),
    ("western-europe", "southern-europe"),
    ("western-europe", "north-africa"),
    ("southern-europe", "middle-east"),
    ("southern-europe", "egypt"),
    ("southern-europe", "north-africa"),
    ("north-africa", "egypt"),
    ("north-africa", "east-africa"),
    ("north-africa", "congo"),
    ("egypt", "middle-east"),
    ("egypt", "east-africa"),
    ("east-africa", "congo"),
    ("east-africa", "south-africa"),
    ("east-africa", "madagascar"),
    ("east-africa", "middle-east"),
    ("congo", "south-africa"),
    ("south-africa", "madagascar"),
    ("ural", "siberia"),
    ("ural", "china"),
    ("ural", "afghanistan"),
    ("siberia", "yakutsk"),
    ("siberia", "irkutsk"),
    ("siberia", "mongolia"),
    ("siberia", "china"),
    ("yakutsk", "kamchatka"),
    ("yakutsk", "irkutsk"),
    ("kamchatka", "irkutsk"),
    ("kamchatka", "mongolia"),
    ("kamchatka", "japan"),
    ("irkutsk", "mongolia"),
    ("mongolia", "japan"),
    ("mongolia", "china"),
    ("afghanistan", "china"),
    ("afghanistan", "india"),
    ("afghanistan", "middle-east"),
    ("china", "india"),
    ("china", "siam"),
    ("middle-east", "india"),
    ("india", "siam"),
    ("siam", "indonesia"),
    ("indonesia", "new-guinea"),
    ("indonesia", "western-australia"),
    ("new-guinea", "western-australia"),
    ("new-guinea", "eastern-australia"),
    ("western-australia", "eastern-australia"),
];

/// The index of the territory whose space id is `id`, if any.
pub fn index_of(id: &str) -> Option<usize> {
    TERRITORIES.iter().position(|t| t.id == id)
}

/// `index_of` at compile time (panics the build on an unknown id).
const fn const_index_of(id: &str) -> usize {
    let mut i = 0;
    while i < TERRITORIES.len() {
        if same(TERRITORIES[i].id.as_bytes(), id.as_bytes()) {
            return i;
        }
        i += 1;
    }
    panic!("a border names an unknown territory");
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// [`BORDERS`] as index pairs, worked out when the module is compiled (the
/// rules ask for neighbours on every move).
const BORDER_INDEXES: [(usize, usize); 83] = {
    let mut pairs = [(0, 0); 83];
    let mut k = 0;
    while k < BORDERS.len() {
        pairs[k] = (const_index_of(BORDERS[k].0), const_index_of(BORDERS[k].1));
        k += 1;
    }
    pairs
};

/// The indexes of the territories bordering territory `index`, ascending.
pub fn neighbors(index: usize) -> Vec<usize> {
    let mut found: Vec<usize> = BORDER_INDEXES
        .iter()
        .filter_map(|&(a, b)| {
            if a == index {
                Some(b)
            } else if b == index {
                Some(a)
            } else {
                None
            }
        })
        .collect();
    found.sort_unstable();
    found
}

/// Whether territories `a` and `b` share a border.
pub fn borders(a: usize, b: usize) -> bool {
    neighbors(a).contains(&b)
}

/// The indexes of the territories of continent `continent`.
pub fn territories_of(continent: usize) -> Vec<usize> {
    (0..TERRITORIES.len()).filter(|&i| TERRITORIES[i].continent == continent).collect()
}

/// The territories reachable from `from` through territories for which
/// `passable` holds (`from` itself excluded), ascending. Used to fortify
/// along a chain of one's own territories.
pub fn reachable(from: usize, passable: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut seen = vec![false; TERRITORIES.len()];
    seen[from] = true;
    let mut frontier = vec![from];
    while let Some(here) = frontier.pop() {
        for next in neighbors(here) {
            if !seen[next] && passable(next) {
                seen[next] = true;
                frontier.push(next);
            }
        }
    }
    (0..TERRITORIES.len()).filter(|&i| seen[i] && i != from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forty_two_territories_in_six_continents_with_the_classic_bonuses() {
        let sizes: Vec<usize> = (0..6).map(|c| territories_of(c).len()).collect();
        assert_eq!(sizes, vec![9, 4, 7, 6, 12, 4]);
        let bonuses: Vec<u32> = CONTINENTS.iter().map(|c| c.bonus).collect();
        assert_eq!(bonuses, vec![5, 2, 5, 3, 7, 2]);
    }

    #[test]
    fn borders_name_real_territories_once_and_connect_the_world() {
        let mut seen = std::collections::BTreeSet::new();
        for &(a, b) in BORDERS.iter() {
            assert!(index_of(a).is_some() && index_of(b).is_some(), "{} {}", a, b);
            assert!(a != b);
            let key = if a < b { (a, b) } else { (b, a) };
            assert!(seen.insert(key), "border {:?} twice", key);
        }
        assert_eq!(reachable(0, |_| true).len(), 41);
        for i in 0..42 {
            for j in neighbors(i) {
                assert!(neighbors(j).contains(&i));
            }
        }
    }

    #[test]
    fn some_well_known_borders() {
        let id = |s| index_of(s).unwrap();
        assert!(borders(id("alaska"), id("kamchatka")));
        assert!(borders(id("brazil"), id("north-africa")));
        assert!(borders(id("siam"), id("indonesia")));
        assert!(!borders(id("japan"), id("china")));
        assert_eq!(neighbors(id("ukraine")).len(), 6);
        assert_eq!(neighbors(id("argentina")).len(), 2);
    }

    #[test]
    fn reachable_keeps_to_passable_territories() {
        let id = |s| index_of(s).unwrap();
        let australia = territories_of(5);
        let within = reachable(id("indonesia"), |i| australia.contains(&i));
        assert_eq!(within, vec![id("new-guinea"), id("western-australia"), id("eastern-australia")]);
    }
}
