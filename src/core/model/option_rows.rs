//! Options declared once: `compactor_options!` turns one row per option (Rust field and type,
//! JSON name, how absence reads, default, range, one-line doc) into the settings struct, its
//! `Default`, its reader, its range check and [`OptionRow`]s, from which the docs' table is
//! drawn and against which a test holds `CompactorOptions` in `types.d.ts`.
//!
//! A row reads
//! `/// doc` `field: Type = "jsonName" mode, default EXPR, range RANGE, ts "type";`, with
//! `shown "text"` after the default where the docs word it (a default worked out from other
//! options). The mode is `json_record!`'s (`fallback` for a plain value, `opt` for one that may
//! be absent).

use std::fmt::Write;

/// The values an option may take. The bounds are whole numbers: written without the standard
/// library's float printing (11 KB of wasm).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    /// Any value of its type.
    Any,
    /// From the first to the second, both included.
    Between(u64, u64),
    /// At most this (an unsigned count).
    AtMost(u64),
    /// At least this.
    AtLeast(u64),
    /// Greater than this.
    Above(u64),
    /// A text that is not empty.
    NonEmpty,
    /// A rule that depends on other options: checked after the rows, worded here.
    Rule(&'static str),
}

impl Range {
    /// Whether `value` is in the range (a rule, or a text, says yes here).
    pub fn holds(&self, value: f64) -> bool {
        match *self {
            Range::Between(min, max) => value >= min as f64 && value <= max as f64,
            Range::AtMost(max) => value <= max as f64,
            Range::AtLeast(min) => value >= min as f64,
            Range::Above(min) => value > min as f64,
            Range::Any | Range::NonEmpty | Range::Rule(_) => true,
        }
    }

    /// The range in words, as an error and the docs give it (`between 0 and 1`); empty for
    /// [`Range::Any`].
    pub fn text(&self) -> String {
        match *self {
            Range::Any => String::new(),
            Range::Between(min, max) => format!("between {min} and {max}"),
            Range::AtMost(max) => format!("at most {max}"),
            Range::AtLeast(min) => format!("at least {min}"),
            Range::Above(min) => format!("greater than {min}"),
            Range::NonEmpty => String::from("not empty"),
            Range::Rule(rule) => String::from(rule),
        }
    }
}

/// A value an option row can hold: how its range is checked and its default shown.
pub trait OptionValue {
    /// Whether the value is in `range`.
    fn in_range(&self, range: &Range) -> bool;
    /// The value as the docs show a default (`32768`, `"repair"`, `true`).
    fn shown(&self) -> String;
}

macro_rules! numeric_option {
    ($($ty:ty),*) => {
        $(impl OptionValue for $ty {
            fn in_range(&self, range: &Range) -> bool {
                range.holds(*self as f64)
            }
            fn shown(&self) -> String {
                self.to_string()
            }
        })*
    };
}

numeric_option!(usize, u32, f64);

impl OptionValue for bool {
    fn in_range(&self, _: &Range) -> bool {
        true
    }
    fn shown(&self) -> String {
        self.to_string()
    }
}

impl OptionValue for String {
    fn in_range(&self, range: &Range) -> bool {
        !(matches!(range, Range::NonEmpty) && self.is_empty())
    }
    fn shown(&self) -> String {
        let mut out = String::new();
        let _ = write!(out, "{self:?}");
        out
    }
}

impl<T: OptionValue> OptionValue for Option<T> {
    fn in_range(&self, range: &Range) -> bool {
        self.as_ref().is_none_or(|value| value.in_range(range))
    }
    fn shown(&self) -> String {
        self.as_ref()
            .map_or_else(|| String::from("none"), OptionValue::shown)
    }
}

/// One option as the docs show it.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionRow {
    /// Its JSON name.
    pub name: &'static str,
    /// Its TypeScript type in `CompactorOptions`.
    pub ts_type: &'static str,
    /// Its default, as the docs show it.
    pub default: String,
    /// Its range in words (empty when any value of its type is taken).
    pub range: String,
    /// What it does, in one line.
    pub doc: &'static str,
}

/// The docs' table of `rows`: option, default, range, meaning.
pub fn options_table(rows: &[OptionRow]) -> String {
    let mut out = String::from(
        "| option | type | default | range | meaning |\n| --- | --- | --- | --- | --- |\n",
    );
    for row in rows {
        let range = if row.range.is_empty() {
            "any"
        } else {
            &row.range
        };
        let _ = writeln!(
            out,
            "| `{}` | `{}` | {} | {} | {} |",
            row.name,
            row.ts_type.replace('|', "\\|"),
            row.default,
            range,
            row.doc
        );
    }
    out
}

/// Declares the options from one table of rows; see [the module](self).
macro_rules! compactor_options {
    (
        $(#[$meta:meta])*
        pub struct $ty:ident {
            $(
                #[doc = $doc:literal]
                $field:ident: $fty:ty = $json:literal $mode:tt,
                default $default:expr $(, shown $shown:literal)?,
                range $range:expr,
                ts $ts:literal;
            )*
        }
    ) => {
        $(#[$meta])*
        pub struct $ty {
            $(#[doc = $doc] pub $field: $fty,)*
        }

        impl Default for $ty {
            fn default() -> Self {
                Self { $($field: $default,)* }
            }
        }

        // Options absent or `null` take their defaults; an unknown option is an error.
        $crate::core::json::record::json_record! {
            read $ty [deny defaults] { $($field: $json $mode,)* }
        }

        impl $ty {
            /// Every option, in the order declared, as the docs show it.
            pub fn rows() -> Vec<$crate::core::model::option_rows::OptionRow> {
                let defaults = Self::default();
                vec![$($crate::core::model::option_rows::OptionRow {
                    name: $json,
                    ts_type: $ts,
                    default: $crate::core::model::option_rows::compactor_options!(
                        @shown defaults.$field $(, $shown)?
                    ),
                    range: $range.text(),
                    doc: $doc.trim(),
                },)*]
            }

            /// The first option out of its row's range, named.
            fn check_rows(&self) -> Result<(), SettingsError> {
                use $crate::core::model::option_rows::OptionValue;
                $(
                    if !self.$field.in_range(&$range) {
                        return Err(SettingsError::out_of($json, &$range));
                    }
                )*
                Ok(())
            }
        }
    };
    (@shown $value:expr) => {
        $crate::core::model::option_rows::OptionValue::shown(&$value)
    };
    (@shown $value:expr, $shown:literal) => {
        String::from($shown)
    };
}

pub(crate) use compactor_options;
