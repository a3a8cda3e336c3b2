//! Strict conversions of script values: Rhai values to and from JSON, script numbers to
//! [`Centi`] (with the line limit), and short descriptions of a value for error messages.

use rhai::{Dynamic, Map};

use crate::game::hooks::Centi;

/// A Rhai value as JSON: integers, floats, booleans, strings, arrays, maps and `()` (null).
/// Anything else (function pointers, timestamps…) is an error naming its type.
pub fn to_json(value: &Dynamic) -> Result<serde_json::Value, String> {
    use serde_json::Value;
    if value.is_unit() {
        return Ok(Value::Null);
    }
    if let Ok(b) = value.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Ok(i) = value.as_int() {
        return Ok(Value::from(i));
    }
    if let Ok(f) = value.as_float() {
        return serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| format!("the number {f} is not finite"));
    }
    if let Ok(c) = value.as_char() {
        return Ok(Value::String(c.to_string()));
    }
    if value.is_string() {
        return Ok(Value::String(value.to_string()));
    }
    if value.is_array() {
        let arr = value.read_lock::<rhai::Array>().ok_or("unreadable array")?;
        return arr
            .iter()
            .enumerate()
            .map(|(i, v)| to_json(v).map_err(|e| format!("[{i}]: {e}")))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if value.is_map() {
        let map = value.read_lock::<Map>().ok_or("unreadable map")?;
        let mut out = serde_json::Map::new();
        for (k, v) in map.iter() {
            out.insert(k.to_string(), to_json(v).map_err(|e| format!(".{k}: {e}"))?);
        }
        return Ok(Value::Object(out));
    }
    Err(format!(
        "a value of type {} has no JSON form",
        value.type_name()
    ))
}

/// JSON as a Rhai value (numbers that fit `i64` become integers, others floats).
pub fn from_json(value: &serde_json::Value) -> Dynamic {
    use serde_json::Value;
    match value {
        Value::Null => Dynamic::UNIT,
        Value::Bool(b) => Dynamic::from_bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Dynamic::from_int(i),
            None => Dynamic::from_float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Dynamic::from(s.clone()),
        Value::Array(a) => Dynamic::from_array(a.iter().map(from_json).collect()),
        Value::Object(o) => {
            let map: Map = o
                .iter()
                .map(|(k, v)| (k.as_str().into(), from_json(v)))
                .collect();
            Dynamic::from_map(map)
        }
    }
}

/// The largest magnitude, in points, a script may return for one line (about 10^13, far beyond
/// any real stake, and safely inside `i64` hundredths when summed).
pub const MAX_POINTS: f64 = 1e13;

/// A script number of points in hundredths, saturated at the host's line limit: a finite number
/// whose magnitude exceeds [`MAX_POINTS`] becomes ±[`MAX_POINTS`] (in hundredths), and the second
/// value says it did (the settlement then carries a `saturated` note, see docs/VARIANTS.md
/// "Saturation"). Non-finite numbers and values that are not numbers stay errors (a script bug).
pub fn to_centi_saturating(value: &Dynamic) -> Result<(Centi, bool), String> {
    let cap = (MAX_POINTS as Centi) * 100;
    if let Ok(i) = value.as_int() {
        if (i as f64).abs() > MAX_POINTS {
            return Ok((if i < 0 { -cap } else { cap }, true));
        }
        return Ok((i * 100, false));
    }
    if let Ok(f) = value.as_float()
        && f.is_finite()
        && f.abs() > MAX_POINTS
    {
        return Ok((if f < 0.0 { -cap } else { cap }, true));
    }
    to_centi(value).map(|c| (c, false))
}

/// A script number (integer or float points) in hundredths of a point.
///
/// Integers are exact. Floats are multiplied by 100 and rounded to the nearest integer, halves
/// away from zero (so 0.125 points is 13 hundredths and −0.125 is −13). Non-finite numbers and
/// magnitudes above [`MAX_POINTS`] are errors.
pub fn to_centi(value: &Dynamic) -> Result<Centi, String> {
    if let Ok(i) = value.as_int() {
        if (i as f64).abs() > MAX_POINTS {
            return Err(format!("{i} points is out of range (at most ±10^13)"));
        }
        return Ok(i * 100);
    }
    if let Ok(f) = value.as_float() {
        if !f.is_finite() {
            return Err(format!("{f} is not a finite number"));
        }
        if f.abs() > MAX_POINTS {
            return Err(format!("{f} points is out of range (at most ±10^13)"));
        }
        return Ok((f * 100.0).round() as Centi);
    }
    Err(format!(
        "expected a number of points (integer or float), found {}",
        describe(value)
    ))
}

/// A test of a value's type (`Dynamic::is_map`…).
type IsType = fn(&Dynamic) -> bool;

/// The names [`describe`] gives the script types, in the order they are tested; any other type
/// goes by Rhai's name.
const TYPE_NAMES: [(IsType, &str); 7] = [
    (Dynamic::is_unit, "()"),
    (Dynamic::is_map, "map"),
    (Dynamic::is_array, "array"),
    (Dynamic::is_string, "string"),
    (Dynamic::is_int, "integer"),
    (Dynamic::is_float, "float"),
    (Dynamic::is_bool, "bool"),
];

/// A short description of a value for error messages: its type and, when short, the value.
pub fn describe(value: &Dynamic) -> String {
    let ty = TYPE_NAMES
        .iter()
        .find(|(is, _)| is(value))
        .map_or_else(|| value.type_name(), |&(_, name)| name);
    let text = value.to_string();
    if value.is_unit() || text.chars().count() > 60 {
        ty.to_string()
    } else {
        format!("{ty} {text}")
    }
}
