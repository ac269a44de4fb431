//! The class the probes call: `public final class java.lang.HprofCpuTimes` with two
//! `public static native void enter(int)` / `exit(int)` methods, built here and defined in the boot loader
//! at VMInit, its natives bound to the recorder with RegisterNatives.
//!
//! Why java.lang: a class defined by the boot loader in a java.base package belongs to java.base, which
//! every module reads and whose java.lang package every module may access; a class on the boot class path
//! would sit in the boot loader's unnamed module, which named modules (java.base itself included) do not
//! read, so probes in JDK classes would fail to link.

use classfile::ClassFile;
use classfile::class_file::Member;
use classfile::constant_pool::ConstantPool;

pub const CLASS_NAME: &str = "java/lang/HprofCpuTimes";
pub const ENTER: &str = "enter";
pub const EXIT: &str = "exit";
pub const SIGNATURE: &str = "(I)V";

const ACC_PUBLIC: u16 = 0x0001;
const ACC_STATIC: u16 = 0x0008;
const ACC_FINAL: u16 = 0x0010;
const ACC_SUPER: u16 = 0x0020;
const ACC_NATIVE: u16 = 0x0100;

pub fn bytes() -> Vec<u8> {
    let mut pool = ConstantPool::new();
    let intern = |pool: &mut ConstantPool, s: &str| pool.intern_utf8(s).expect("a small pool");
    let this_class = pool.intern_class(CLASS_NAME).expect("a small pool");
    let super_class = pool.intern_class("java/lang/Object").expect("a small pool");
    let signature = intern(&mut pool, SIGNATURE);
    let methods = [ENTER, EXIT]
        .iter()
        .map(|name| Member {
            access: ACC_PUBLIC | ACC_STATIC | ACC_NATIVE,
            name_index: intern(&mut pool, name),
            descriptor_index: signature,
            attributes: Vec::new(),
        })
        .collect();
    ClassFile {
        minor: 0,
        major: 52,
        pool,
        access: ACC_PUBLIC | ACC_FINAL | ACC_SUPER,
        this_class,
        super_class,
        interfaces: Vec::new(),
        fields: Vec::new(),
        methods,
        attributes: Vec::new(),
    }
    .write()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_probe_class_parses_back_and_is_not_instrumented() {
        let b = super::bytes();
        let c = classfile::ClassFile::parse(&b).unwrap();
        assert_eq!(c.name().unwrap(), super::CLASS_NAME);
        assert_eq!(c.methods.len(), 2);
        let probes = classfile::Probes { class: super::CLASS_NAME, enter: super::ENTER, exit: super::EXIT };
        assert!(classfile::instrument(&b, &probes, &mut |_, _| 0).is_err());
    }
}
