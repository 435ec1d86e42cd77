//! One declarative helper for the enum-like options (`--preset default|paper`, `variant:
//! "cape"`, …): [`named_enum!`] declares an enum from one table of (variant, "name") rows and
//! generates its names, `as_str`, `Display` and `FromStr`, whose error is a
//! [`Error::param`](crate::error::Error::param) naming the parameter and listing the accepted
//! names ([`choices`]).
//!
//! ```ignore
//! named_enum! {
//!     /// How a simulation splits the rows among the parties.
//!     #[derive(Debug, Clone, Copy, PartialEq, Eq)]
//!     pub enum Partition: "partition" {
//!         /// IID.
//!         Iid = "iid" ("default"),
//!         /// Class-skewed.
//!         Skewed = "skewed",
//!     }
//! }
//! // "skewed".parse() == Ok(Partition::Skewed); Partition::Iid.as_str() == "iid";
//! // Partition::NAMES == ["iid", "skewed"];
//! // "x".parse::<Partition>() fails with "invalid partition = x: use 'iid' (default) or 'skewed'".
//! ```
//!
//! A row may add aliases (`Gaussian = "gaussian" | "normal"`: accepted, not listed) and a
//! description in parentheses (shown after the name in the error). A string after the
//! parameter (`pub enum ColumnTypes: "column_types", "; or type every column in a schema"`)
//! is appended to the error's advice. Without a parameter (`pub enum Model { … }`) no
//! `FromStr` is generated, for an enum that parses its own way with the generated `from_name`.
//! Enums whose variants carry data use the `impl FromStr for Name: "param" { "name" => value, … }`
//! form.

/// `None` or `Some(description)`, for the optional description of a table row.
macro_rules! __named_enum_description {
    () => {
        None
    };
    ($d:literal) => {
        Some($d)
    };
}

/// Declares an enum from one table of (variant, "name") rows; see the module docs.
macro_rules! named_enum {
    // A C-like enum with a parameter: the declaration below, plus `FromStr`.
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $param:literal $(, $suffix:literal)? { $($body:tt)* }
    ) => {
        $crate::enums::named_enum! { $(#[$meta])* $vis enum $name { $($body)* } }

        impl ::std::str::FromStr for $name {
            type Err = $crate::error::Error;
            fn from_str(s: &str) -> $crate::error::Result<Self> {
                Self::from_name(s).ok_or_else(|| {
                    $crate::error::Error::param(
                        $param,
                        s,
                        format!("{}{}", Self::choices(), concat!("" $(, $suffix)?)),
                    )
                })
            }
        }
    };
    // A C-like enum: the enum, its names, `as_str`, `from_name`, `choices` and `Display`.
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $text:literal $(| $alias:literal)* $(($desc:literal))?
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// The accepted names, in declaration order (aliases left out).
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The name of this value: what `FromStr` accepts and `Display` writes.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }

            /// The value with this name (or alias), if any.
            pub fn from_name(s: &str) -> Option<Self> {
                match s {
                    $( $text $(| $alias)* => Some($name::$variant), )+
                    _ => None,
                }
            }

            /// The advice of a parse error: "use 'a' (what it is), 'b' or 'c'".
            pub fn choices() -> String {
                $crate::enums::choices(&[
                    $( ($text, $crate::enums::__named_enum_description!($($desc)?)) ),+
                ])
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
    // An enum whose variants carry data: `FromStr` from (name, value) rows, and the names.
    (
        impl FromStr for $name:ident : $param:literal {
            $( $text:literal $(($desc:literal))? => $value:expr ),+ $(,)?
        }
    ) => {
        impl $name {
            /// The accepted names, in table order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::error::Error;
            fn from_str(s: &str) -> $crate::error::Result<Self> {
                match s {
                    $( $text => Ok($value), )+
                    other => Err($crate::error::Error::param(
                        $param,
                        other,
                        $crate::enums::choices(&[
                            $( ($text, $crate::enums::__named_enum_description!($($desc)?)) ),+
                        ]),
                    )),
                }
            }
        }
    };
}

pub(crate) use {__named_enum_description, named_enum};

/// The advice listing accepted names: "use 'a' (what it is), 'b' or 'c'".
pub fn choices(names: &[(&str, Option<&str>)]) -> String {
    let items: Vec<String> = names
        .iter()
        .map(|(n, d)| match d {
            Some(d) => format!("'{n}' ({d})"),
            None => format!("'{n}'"),
        })
        .collect();
    match items.split_last() {
        None => "no value is accepted".into(),
        Some((last, [])) => format!("use {last}"),
        Some((last, rest)) => format!("use {} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::choices;
    use crate::error::{ErrorKind, ParamStyle};

    named_enum! {
        /// A test enum.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Shape: "shape_kind", "; or give a schema" {
            /// Round.
            Circle = "circle" | "round" ("the default"),
            /// Not round.
            Square = "square",
            /// Also not round.
            Triangle = "tri-angle" ("three sides"),
        }
    }

    named_enum! {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Bare {
            One = "one",
        }
    }

    #[derive(Debug, PartialEq)]
    enum Carrying {
        Plain,
        Sized(usize),
    }

    named_enum! {
        impl FromStr for Carrying: "carrying" {
            "plain" ("no data") => Carrying::Plain,
            "sized" => Carrying::Sized(3),
        }
    }

    #[test]
    fn names_aliases_display_and_errors() {
        assert_eq!(Shape::NAMES, ["circle", "square", "tri-angle"]);
        assert_eq!("circle".parse::<Shape>().unwrap(), Shape::Circle);
        assert_eq!("round".parse::<Shape>().unwrap(), Shape::Circle);
        assert_eq!("tri-angle".parse::<Shape>().unwrap(), Shape::Triangle);
        assert_eq!(Shape::Square.as_str(), "square");
        assert_eq!(Shape::Triangle.to_string(), "tri-angle");
        for bad in ["Circle", " circle", "", "triangle"] {
            assert!(bad.parse::<Shape>().is_err(), "{bad:?} accepted");
        }
        let e = "hexagon".parse::<Shape>().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Parameter);
        assert_eq!(
            e.render(ParamStyle::Cli),
            "invalid --shape-kind = hexagon: use 'circle' (the default), 'square' or 'tri-angle' (three sides); or give a schema"
        );
        assert_eq!(Bare::NAMES, ["one"]);
        assert_eq!(Bare::from_name("one"), Some(Bare::One));
        assert_eq!(Bare::from_name("two"), None);
        assert_eq!(Bare::choices(), "use 'one'");
        assert_eq!(Carrying::NAMES, ["plain", "sized"]);
        assert_eq!("sized".parse::<Carrying>().unwrap(), Carrying::Sized(3));
        assert_eq!(
            "x".parse::<Carrying>().unwrap_err().to_string(),
            "invalid carrying = x: use 'plain' (no data) or 'sized'"
        );
    }

    /// Every option enum reads and writes the same names through serde (JSON requests and
    /// receipts) as through `FromStr` (CLI flags and string options).
    #[test]
    fn serde_names_are_the_parse_names() {
        use crate::error::Error;
        use serde::{de::DeserializeOwned, Serialize};
        use std::fmt::Debug;
        use std::str::FromStr;
        fn check<T>(names: &[&str])
        where
            T: FromStr<Err = Error> + Serialize + DeserializeOwned + PartialEq + Debug,
        {
            assert!(!names.is_empty());
            for &n in names {
                let v: T = n.parse().unwrap();
                assert_eq!(serde_json::to_value(&v).unwrap(), serde_json::json!(n));
                assert_eq!(
                    serde_json::from_value::<T>(serde_json::json!(n)).unwrap(),
                    v
                );
            }
        }
        check::<crate::images::decode::AlphaMode>(crate::images::decode::AlphaMode::NAMES);
        check::<crate::audit::Canary>(crate::audit::Canary::NAMES);
        check::<crate::accountant::AccountantKind>(crate::accountant::AccountantKind::NAMES);
        check::<crate::accountant::Preset>(crate::accountant::Preset::NAMES);
        check::<crate::pipelines::synth::Adjacency>(crate::pipelines::synth::Adjacency::NAMES);
        check::<crate::pipelines::synth::ColumnTypes>(crate::pipelines::synth::ColumnTypes::NAMES);
        check::<crate::pipelines::federated::Partition>(
            crate::pipelines::federated::Partition::NAMES,
        );
        check::<crate::mechanisms::federated::Variant>(
            crate::mechanisms::federated::Variant::NAMES,
        );
        check::<crate::mechanisms::dpmix::LabelOutput>(
            crate::mechanisms::dpmix::LabelOutput::NAMES,
        );
        check::<crate::mechanisms::gmm::Noise>(crate::mechanisms::gmm::Noise::NAMES);
        check::<crate::mechanisms::gmm::Adjacency>(crate::mechanisms::gmm::Adjacency::NAMES);
        check::<crate::mechanisms::gmm::CovarianceNoise>(
            crate::mechanisms::gmm::CovarianceNoise::NAMES,
        );
    }

    #[test]
    fn choices_are_listed_with_commas_and_a_final_or() {
        assert_eq!(choices(&[]), "no value is accepted");
        assert_eq!(choices(&[("a", None)]), "use 'a'");
        assert_eq!(
            choices(&[("a", Some("x")), ("b", None)]),
            "use 'a' (x) or 'b'"
        );
        assert_eq!(
            choices(&[("a", None), ("b", None), ("c", Some("y"))]),
            "use 'a', 'b' or 'c' (y)"
        );
    }
}
