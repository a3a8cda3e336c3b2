//! Read accessors written from a list of fields, for the state types of both game families
//! (Shuangkou's [`crate::game::Game`], 升級's [`crate::shengji::Game`]): one piece of code for the
//! getter that returns a field as it is, instead of one hand-written method per field.

/// Inside an `impl` block: for each `copy` field `name: T`, `pub fn name(&self) -> T` (a copy
/// of the field; `T: Copy`); for each `borrow` field `name: T`, `pub fn name(&self) -> &T` (a
/// borrow; `T` may be the slice a `Vec` field derefs to). Doc comments before a field become the
/// method's.
macro_rules! accessors {
    (
        copy { $($(#[$c_attr:meta])* $c:ident: $c_ty:ty),* $(,)? }
        borrow { $($(#[$b_attr:meta])* $b:ident: $b_ty:ty),* $(,)? }
    ) => {
        $(
            $(#[$c_attr])*
            pub fn $c(&self) -> $c_ty {
                self.$c
            }
        )*
        $(
            $(#[$b_attr])*
            pub fn $b(&self) -> &$b_ty {
                &self.$b
            }
        )*
    };
}

pub(crate) use accessors;
