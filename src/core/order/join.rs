//! The crate's one join. The standard library's `[S]::join` is copied into the module once
//! per element type (1 KB of code each); this one is a few dozen bytes a type.

/// Texts joined with a separator: `parts.joined(", ")` where std has `parts.join(", ")`.
pub trait Joined {
    /// The texts with `separator` between each two, as `[S]::join` gives them.
    fn joined(&self, separator: &str) -> String;
}

impl<S: AsRef<str>> Joined for [S] {
    fn joined(&self, separator: &str) -> String {
        let mut out = String::new();
        for (index, part) in self.iter().enumerate() {
            if index > 0 {
                out.push_str(separator);
            }
            out.push_str(part.as_ref());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::disallowed_methods)]
    fn joins_as_the_standard_library_does() {
        let lists: [&[&str]; 5] = [&[], &[""], &["a"], &["a", "", "b"], &["é", "日本", "\n"]];
        for list in lists {
            for separator in ["", ", ", "\n"] {
                assert_eq!(list.joined(separator), list.join(separator), "{list:?}");
                let owned: Vec<String> = list.iter().map(|p| (*p).to_owned()).collect();
                assert_eq!(owned.joined(separator), owned.join(separator), "{list:?}");
            }
        }
    }
}
