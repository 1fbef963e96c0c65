// temporary: print the flows table
fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap();
    let overrides: Vec<String> = args.collect();
    let text = std::fs::read_to_string(&path).unwrap();
    let out = ccsim_core::run_toml(&text, &overrides, None).unwrap();
    for (name, col) in &out.flows.columns {
        println!("{name}: {col:?}");
    }
    for (name, col) in &out.links.columns {
        if name.contains("util") || name.contains("drops") || name == "link" || name == "direction"
        {
            println!("{name}: {col:?}");
        }
    }
}
