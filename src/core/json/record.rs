//! Records declared once: `json_record!` turns one table of fields (Rust name, JSON name,
//! how absence reads) into [`Record::FIELDS`], [`ToJson`](super::write::ToJson) and
//! [`FromJson`](super::read::FromJson), the same code a hand-written pair would be.
//!
//! A row is `rust_name: "jsonName" mode`, where the mode says how the field is read and written:
//!
//! | mode | read | written |
//! | --- | --- | --- |
//! | `req` | must be given | always |
//! | `opt` | absent or `null` is `None` | only when `Some` |
//! | `null` | absent or `null` is `None` | always (`null` when `None`) |
//! | `default` | absent or `null` is `Default::default()` | always |
//! | `(or EXPR)` | absent or `null` is `EXPR` | always |
//! | `fallback` | absent or `null` is the field of `Self::default()` | always |
//!
//! The directions are `read`, `write` or `read write`. A read takes flags in brackets:
//! `deny` refuses a field the table does not name ([`ReadError::Unknown`](super::read::ReadError));
//! `defaults` makes `Self::default()` for the `fallback` rows. A record read and written may end
//! them with `..extra`, which gathers other code's fields, in their order, into the field `extra`
//! (`Vec<(String, RawJson)>`), written back after the table's. Without `deny` or `..`, other
//! fields are ignored.
//!
//! `json_names!` does the same for an enum written as one string per variant.

/// A record whose JSON fields one `json_record!` table declares.
pub trait Record {
    /// Every field's JSON name, in the order written.
    const FIELDS: &'static [&'static str];
}

/// Declares a record's JSON form from one table; see [the module](self).
macro_rules! json_record {
    (read write $ty:ident $(<$param:ident>)? $([$($flag:ident)* $(..$extra:ident)?])? { $($table:tt)* }) => {
        $crate::core::json::record::json_record!(@fields $ty [$($param)?] { $($table)* });
        $crate::core::json::record::json_record!(@read $ty [$($param)?] [$($($flag)*)?] ($($($extra)?)?) { $($table)* });
        $crate::core::json::record::json_record!(@write $ty [$($param)?] ($($($extra)?)?) { $($table)* });
    };
    (read $ty:ident $([$($flag:ident)*])? { $($table:tt)* }) => {
        $crate::core::json::record::json_record!(@fields $ty [] { $($table)* });
        $crate::core::json::record::json_record!(@read $ty [] [$($($flag)*)?] () { $($table)* });
    };
    (write $ty:ident { $($table:tt)* }) => {
        $crate::core::json::record::json_record!(@fields $ty [] { $($table)* });
        $crate::core::json::record::json_record!(@write $ty [] () { $($table)* });
    };

    (@fields $ty:ident [$($param:ident)?] { $($field:ident: $name:literal $mode:tt),* $(,)? }) => {
        impl<$($param)?> $crate::core::json::record::Record for $ty<$($param)?> {
            const FIELDS: &'static [&'static str] = &[$($name),*];
        }
    };

    (@read $ty:ident [$($param:ident)?] [$($flag:ident)*] ($($extra:ident)?) { $($field:ident: $name:literal $mode:tt),* $(,)? }) => {
        impl<$($param: $crate::core::json::read::FromJson)?> $crate::core::json::read::FromJson for $ty<$($param)?> {
            fn from_json(json: &str) -> Result<Self, $crate::core::json::read::ReadError> {
                let object = $crate::core::json::read::Object::read(json)?;
                $($crate::core::json::record::json_record!(@flag $flag, object, defaults);)*
                Ok($ty {
                    $($field: $crate::core::json::record::json_record!(@get object, defaults, $field, $name, $mode),)*
                    $($extra: object.rest(<Self as $crate::core::json::record::Record>::FIELDS),)?
                })
            }
        }
    };

    (@flag deny, $object:ident, $defaults:ident) => {
        $object.deny_unknown(<Self as $crate::core::json::record::Record>::FIELDS)?;
    };
    (@flag defaults, $object:ident, $defaults:ident) => {
        let $defaults = <Self as Default>::default();
    };

    (@get $object:ident, $defaults:ident, $field:ident, $name:literal, req) => {
        $object.req($name)?
    };
    (@get $object:ident, $defaults:ident, $field:ident, $name:literal, opt) => {
        $object.opt($name)?
    };
    (@get $object:ident, $defaults:ident, $field:ident, $name:literal, null) => {
        $object.opt($name)?
    };
    (@get $object:ident, $defaults:ident, $field:ident, $name:literal, default) => {
        $object.or_default($name)?
    };
    (@get $object:ident, $defaults:ident, $field:ident, $name:literal, fallback) => {
        $object.opt($name)?.unwrap_or($defaults.$field)
    };
    (@get $object:ident, $defaults:ident, $field:ident, $name:literal, (or $value:expr)) => {
        $object.opt($name)?.unwrap_or($value)
    };

    (@write $ty:ident [$($param:ident)?] ($($extra:ident)?) { $($field:ident: $name:literal $mode:tt),* $(,)? }) => {
        impl<$($param: $crate::core::json::write::ToJson)?> $crate::core::json::write::ToJson for $ty<$($param)?> {
            fn write_json(&self, out: &mut String) {
                let mut object = $crate::core::json::write::ObjectOut::new(out);
                $($crate::core::json::record::json_record!(@put object, self, $field, $name, $mode);)*
                $(
                    for (name, value) in &self.$extra {
                        object.field(name, value);
                    }
                )?
            }
        }
    };

    (@put $object:ident, $self:ident, $field:ident, $name:literal, opt) => {
        $object.field_opt($name, &$self.$field);
    };
    (@put $object:ident, $self:ident, $field:ident, $name:literal, $mode:tt) => {
        $object.field($name, &$self.$field);
    };
}

pub(crate) use json_record;

/// Declares the JSON names of an enum's variants once: `as_str`, [`ToJson`](super::write::ToJson)
/// and a [`FromJson`](super::read::FromJson) that names every accepted value when it refuses one;
/// with `all` first, `ALL` too (every value, in the order declared).
macro_rules! json_names {
    (all $ty:ident { $($variant:ident = $name:literal),* $(,)? }) => {
        impl $ty {
            /// Every value, in the order declared.
            pub const ALL: [$ty; 0 $(+ $crate::core::json::record::json_names!(@one $variant))*] =
                [$($ty::$variant),*];
        }

        $crate::core::json::record::json_names!($ty { $($variant = $name),* });
    };
    (@one $variant:ident) => {
        1
    };
    ($ty:ident { $($variant:ident = $name:literal),* $(,)? }) => {
        impl $ty {
            /// The JSON name of this value.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)*
                }
            }
        }

        impl $crate::core::json::write::ToJson for $ty {
            fn write_json(&self, out: &mut String) {
                $crate::core::json::write::write_string(out, self.as_str());
            }
        }

        impl $crate::core::json::read::FromJson for $ty {
            fn from_json(json: &str) -> Result<Self, $crate::core::json::read::ReadError> {
                $crate::core::json::read::one_of(json, &[$(($name, $ty::$variant)),*])
            }
        }
    };
}

pub(crate) use json_names;
