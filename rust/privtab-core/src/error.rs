//! The one error type of the core. Every message names the argument, the offending value and
//! the rule it broke, so the Python layer can pass it on unchanged.

/// Errors returned by privtab-core kernels.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A scalar argument is out of its allowed range (e.g. `epsilon` ≤ 0).
    #[error("{name} {rule}, got {value}")]
    InvalidParameter {
        /// The argument's name as the user sees it.
        name: &'static str,
        /// The offending value, formatted.
        value: String,
        /// The rule it broke, phrased to follow the name ("must be finite and > 0").
        rule: &'static str,
    },
    /// Array data is malformed: ragged or mismatched lengths, codes out of range, NaN.
    #[error("{0}")]
    InvalidData(String),
    /// A declared domain cannot be represented (e.g. a cardinality product above 2^64).
    #[error("{0}")]
    Domain(String),
    /// The requested output would not fit in memory or exceeds a caller's cap.
    #[error("{0}")]
    OutputTooLarge(String),
    /// A file cannot be read.
    #[error("cannot read {path}: {message}")]
    Io {
        /// The file as the caller named it.
        path: String,
        /// What went wrong, so callers can tell a missing file from the rest.
        kind: std::io::ErrorKind,
        /// The operating system's message.
        message: String,
    },
    /// The operating system gave no random bytes for a seed.
    #[error("cannot draw a seed from the operating system's entropy source: {0}")]
    Entropy(String),
    /// [`request_interrupt`](crate::resources::request_interrupt) stopped the kernel.
    #[error("interrupted")]
    Interrupted,
}

/// Result alias used throughout the core.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Builds [`Error::Io`] for the file `path`.
    pub fn io(path: &std::path::Path, err: &std::io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            kind: err.kind(),
            message: err.to_string(),
        }
    }

    /// Builds [`Error::InvalidParameter`] from any displayable value.
    pub fn parameter(
        name: &'static str,
        value: impl std::fmt::Display,
        rule: &'static str,
    ) -> Self {
        Error::InvalidParameter {
            name,
            value: value.to_string(),
            rule,
        }
    }
}

/// Checks that a privacy parameter or noise scale is finite and strictly positive.
///
/// # Errors
/// [`Error::InvalidParameter`] naming `name` when `value` is NaN, infinite, zero or negative.
pub fn check_positive_finite(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::parameter(name, value, "must be finite and > 0"))
    }
}

/// Checks a probability in the closed interval [0, 1].
///
/// # Errors
/// [`Error::InvalidParameter`] naming `name` when `value` is NaN or outside [0, 1].
pub fn check_probability(name: &'static str, value: f64) -> Result<f64> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(Error::parameter(
            name,
            value,
            "must be a probability in [0, 1]",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_argument_value_and_rule() {
        let err = check_positive_finite("epsilon", -1.0).unwrap_err();
        assert_eq!(err.to_string(), "epsilon must be finite and > 0, got -1");
        assert!(check_positive_finite("scale", f64::NAN).is_err());
        assert!(check_positive_finite("scale", f64::INFINITY).is_err());
        assert!(check_probability("p", 1.5).is_err());
        assert_eq!(check_probability("p", 0.25), Ok(0.25));
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let err = Error::io(std::path::Path::new("a.dat"), &missing);
        assert!(matches!(
            err,
            Error::Io {
                kind: std::io::ErrorKind::NotFound,
                ..
            }
        ));
        assert!(err.to_string().starts_with("cannot read a.dat: "), "{err}");
    }
}
