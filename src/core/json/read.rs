//! Typed values read from JSON text: [`FromJson`] for the package's records and the options
//! it is given, with errors that name the field and say what was found.

use crate::core::order::join::Joined;
use std::borrow::Cow;
use std::fmt;

use crate::core::json::number::parse_decimal;
use crate::core::json::scan::{document, items, members, string, SyntaxError};

/// `err`, of the field `name` (one body for every type read).
#[inline(never)]
fn in_field(name: &'static str, err: ReadError) -> ReadError {
    ReadError::In(name, Box::new(err))
}

/// Why a JSON text is not the value wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The text is not JSON.
    Syntax(SyntaxError),
    /// A field was given that the object does not have (options only).
    Unknown {
        /// The field given.
        name: String,
        /// The fields the object has.
        known: &'static [&'static str],
    },
    /// A field that must be given is absent.
    Missing(&'static str),
    /// A value of another type or out of range.
    Invalid {
        /// What was found (`the text "30"`, `an array`).
        found: String,
        /// What was wanted (`a whole number`).
        wanted: Cow<'static, str>,
    },
    /// The error of the field `.0` of an object.
    In(&'static str, Box<ReadError>),
}

impl ReadError {
    /// The dotted path of the field the error is about (empty for the value itself), and the
    /// error there.
    pub fn located(&self) -> (String, &ReadError) {
        let mut path = String::new();
        let mut error = self;
        while let ReadError::In(field, inner) = error {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(field);
            error = inner;
        }
        (path, error)
    }

    /// `json` is not `wanted`.
    pub fn invalid(json: &str, wanted: impl Into<Cow<'static, str>>) -> Self {
        ReadError::Invalid {
            found: found(json),
            wanted: wanted.into(),
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, error) = self.located();
        if !path.is_empty() {
            write!(f, "{path}: ")?;
        }
        match error {
            ReadError::Syntax(err) => write!(f, "{err}"),
            ReadError::Unknown { name, .. } => write!(f, "\"{name}\" is not a field"),
            ReadError::Missing(name) => write!(f, "\"{name}\" is required"),
            ReadError::Invalid { found, wanted } => write!(f, "got {found}, expected {wanted}"),
            ReadError::In(..) => Ok(()),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<SyntaxError> for ReadError {
    fn from(err: SyntaxError) -> Self {
        ReadError::Syntax(err)
    }
}

/// A JSON value as a reader of JavaScript names it.
fn found(json: &str) -> String {
    match json.as_bytes().first() {
        Some(b'"') => format!("the text {json}"),
        Some(b'{') => "an object".into(),
        Some(b'[') => "an array".into(),
        Some(b'n') => "null".into(),
        Some(b't' | b'f') => format!("`{json}`"),
        _ => format!("the number `{json}`"),
    }
}

/// A value read from its JSON text.
pub trait FromJson: Sized {
    /// The value `json` (one JSON value, without surrounding whitespace) holds.
    fn from_json(json: &str) -> Result<Self, ReadError>;
}

/// The value of type `T` the whole text `text` holds.
pub fn from_text<T: FromJson>(text: &str) -> Result<T, ReadError> {
    T::from_json(document(text)?)
}

/// The members of an object, looked up by name (the last of a key given twice wins).
pub struct Object<'a> {
    fields: Vec<(Cow<'a, str>, &'a str)>,
}

impl<'a> Object<'a> {
    /// The object `json`; anything else is [`ReadError::Invalid`].
    pub fn read(json: &'a str) -> Result<Self, ReadError> {
        let fields = members(json)
            .ok_or_else(|| ReadError::invalid(json, "an object"))?
            .collect();
        Ok(Object { fields })
    }

    /// The text of the field `name`, when given.
    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.fields
            .iter()
            .rev()
            .find(|(key, _)| key == name)
            .map(|(_, value)| *value)
    }

    /// The field `name`, which must be given.
    pub fn req<T: FromJson>(&self, name: &'static str) -> Result<T, ReadError> {
        let json = self.get(name).ok_or(ReadError::Missing(name))?;
        T::from_json(json).map_err(|err| in_field(name, err))
    }

    /// The field `name`; absent and `null` are `None`.
    pub fn opt<T: FromJson>(&self, name: &'static str) -> Result<Option<T>, ReadError> {
        match self.given(name) {
            None => Ok(None),
            Some(json) => T::from_json(json)
                .map(Some)
                .map_err(|err| in_field(name, err)),
        }
    }

    /// The text of the field `name` when given and not `null` (one body for every type read).
    #[inline(never)]
    fn given(&self, name: &str) -> Option<&'a str> {
        self.get(name).filter(|json| *json != "null")
    }

    /// The field `name`; absent and `null` are the default.
    pub fn or_default<T: FromJson + Default>(&self, name: &'static str) -> Result<T, ReadError> {
        self.opt(name).map(Option::unwrap_or_default)
    }

    /// [`ReadError::Unknown`] for the first field not in `known`.
    pub fn deny_unknown(&self, known: &'static [&'static str]) -> Result<(), ReadError> {
        match self.fields.iter().find(|(key, _)| !known.contains(&&**key)) {
            Some((name, _)) => Err(ReadError::Unknown {
                name: name.clone().into_owned(),
                known,
            }),
            None => Ok(()),
        }
    }

    /// The fields not in `known`, in order, each once (its last value).
    pub fn rest(&self, known: &[&str]) -> Vec<(String, RawJson)> {
        let mut rest: Vec<(String, RawJson)> = Vec::new();
        for (key, value) in &self.fields {
            if known.contains(&&**key) {
                continue;
            }
            match rest.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = RawJson::from(*value),
                None => rest.push((key.clone().into_owned(), RawJson::from(*value))),
            }
        }
        rest
    }
}

/// A JSON value kept as its text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawJson(pub String);

impl RawJson {
    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.0
    }
}

impl From<&str> for RawJson {
    fn from(json: &str) -> Self {
        RawJson(json.to_owned())
    }
}

impl FromJson for RawJson {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        Ok(RawJson::from(json))
    }
}

impl FromJson for String {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        string(json)
            .map(Cow::into_owned)
            .ok_or_else(|| ReadError::invalid(json, "a string"))
    }
}

impl FromJson for bool {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        match json {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(ReadError::invalid(json, "a boolean")),
        }
    }
}

impl FromJson for f64 {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        match json.as_bytes().first() {
            Some(b'-' | b'0'..=b'9') => parse_decimal(json),
            _ => None,
        }
        .ok_or_else(|| ReadError::invalid(json, "a number"))
    }
}

/// A whole number of at most `max`: digits, or a number with no fraction (`5.0`, `1e3`).
fn whole(json: &str, max: u64) -> Result<u64, ReadError> {
    let value = json.parse::<u64>().ok().or_else(|| {
        let number = f64::from_json(json).ok()?;
        // Below 2^64 every whole double is a u64 exactly (`as` would saturate above it).
        let in_range = (0.0..18_446_744_073_709_551_616.0).contains(&number);
        (number.fract() == 0.0 && in_range).then_some(number as u64)
    });
    match value {
        Some(value) if value <= max => Ok(value),
        _ => Err(ReadError::invalid(json, "a whole number")),
    }
}

impl FromJson for u64 {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        whole(json, u64::MAX)
    }
}

impl FromJson for u32 {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        whole(json, u64::from(u32::MAX)).map(|n| n as u32)
    }
}

impl FromJson for usize {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        whole(json, usize::MAX as u64).map(|n| n as usize)
    }
}

impl<T: FromJson> FromJson for Option<T> {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        match json {
            "null" => Ok(None),
            _ => T::from_json(json).map(Some),
        }
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        let mut read = Vec::new();
        each_item(json, &mut |item| {
            read.push(T::from_json(item)?);
            Ok(())
        })?;
        Ok(read)
    }
}

/// Runs `read` on every item of the array `json`, in order, until one fails (one body for
/// every type of item).
#[inline(never)]
fn each_item(
    json: &str,
    read: &mut dyn FnMut(&str) -> Result<(), ReadError>,
) -> Result<(), ReadError> {
    for item in items(json).ok_or_else(|| ReadError::invalid(json, "an array"))? {
        read(item)?;
    }
    Ok(())
}

impl<T: FromJson + Copy + Default, const N: usize> FromJson for [T; N] {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        let values: Vec<T> = Vec::from_json(json)?;
        let mut out = [T::default(); N];
        if values.len() != N {
            return Err(ReadError::invalid(json, format!("an array of {N}")));
        }
        out.copy_from_slice(&values);
        Ok(out)
    }
}

/// Both values, or the error that says more: a value of the wrong type before an absent one
/// (`{ code: 42 }` is about the 42 first).
pub fn both<A, B>(a: Result<A, ReadError>, b: Result<B, ReadError>) -> Result<(A, B), ReadError> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (Err(ReadError::Missing(_)), Err(err)) | (Err(err), _) | (_, Err(err)) => Err(err),
    }
}

/// The variant of `names` whose name the JSON string `json` is.
pub fn one_of<T: Copy>(json: &str, names: &[(&'static str, T)]) -> Result<T, ReadError> {
    let text = string(json);
    names
        .iter()
        .find(|(name, _)| text.as_deref() == Some(*name))
        .map(|(_, value)| *value)
        .ok_or_else(|| {
            let list: Vec<String> = names
                .iter()
                .map(|(name, _)| format!("\"{name}\""))
                .collect();
            ReadError::invalid(json, format!("one of {}", list.joined(", ")))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_typed_and_errors_name_them() {
        let text = r#"{"a":1,"b":"x","c":null,"d":[1,2],"a":2}"#;
        let json = document(text).unwrap();
        let object = Object::read(json).unwrap();
        assert_eq!(object.req::<u32>("a"), Ok(2));
        assert_eq!(object.opt::<String>("c"), Ok(None));
        assert_eq!(object.or_default::<Vec<u32>>("d"), Ok(vec![1, 2]));
        assert_eq!(object.opt::<u32>("z"), Ok(None));
        assert_eq!(
            object.req::<u32>("b").unwrap_err().to_string(),
            "b: got the text \"x\", expected a whole number"
        );
        assert_eq!(
            object.req::<u32>("z").unwrap_err().to_string(),
            "\"z\" is required"
        );
        let unknown = object.deny_unknown(&["a", "b"]).unwrap_err();
        assert!(matches!(unknown, ReadError::Unknown { ref name, .. } if name == "c"));
        let rest = object.rest(&["b", "c"]);
        assert_eq!(rest.len(), 2);
        assert_eq!((rest[0].0.as_str(), rest[0].1.get()), ("a", "2"));
        assert!(Object::read("[1]").is_err());
    }

    #[test]
    fn numbers_read_in_range_only() {
        assert_eq!(from_text::<u32>("4294967295"), Ok(u32::MAX));
        assert!(from_text::<u32>("4294967296").is_err());
        assert!(from_text::<u32>("-1").is_err());
        assert!(from_text::<u32>("2.5").is_err());
        assert_eq!(from_text::<u32>("5.0"), Ok(5));
        assert_eq!(from_text::<u64>("1e3"), Ok(1000));
        assert_eq!(from_text::<u64>("18446744073709551615"), Ok(u64::MAX));
        assert!(from_text::<u64>("18446744073709551616").is_err());
        assert!(from_text::<u64>("1.8446744073709552e19").is_err());
        assert!(from_text::<u64>("1e20").is_err());
        assert_eq!(
            from_text::<u64>("1.8446744073709550e19"),
            Ok(18_446_744_073_709_549_568)
        );
        assert_eq!(from_text::<f64>("-0.25"), Ok(-0.25));
        assert!(from_text::<f64>("\"1\"").is_err());
        assert_eq!(from_text::<[u32; 2]>("[1,4]"), Ok([1, 4]));
        assert!(from_text::<[u32; 2]>("[1]").is_err());
        assert_eq!(one_of(r#""b""#, &[("a", 1), ("b", 2)]), Ok(2));
        assert_eq!(
            one_of(r#""c""#, &[("a", 1), ("b", 2)])
                .unwrap_err()
                .to_string(),
            "got the text \"c\", expected one of \"a\", \"b\""
        );
    }
}
