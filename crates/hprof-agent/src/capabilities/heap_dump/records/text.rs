//! Text heap dump (`format=a`). HEAP DUMP BEGIN names the object count and bytes, known only after the
//! walk: the lines go to a spool (see `sink`) and are copied into the profile after that header.

use super::reference_at;
use crate::capabilities::heap_dump::plan::layout::{ClassKind, DumpClass};
use crate::capabilities::heap_dump::walk::heap_sink::{ClassValues, HeapSink, Root};
use hprof_format::serial_base;
use hprof_format::tags::BasicType;
use hprof_format::text::heap::{self as lines, ClassLine};
use std::io::{self, Write};

const NO_TRACE: u32 = serial_base::TRACE;

pub struct TextSink<W> {
    spool: W,
    pub objects: u64,
    pub bytes: u64,
}

impl<W: Write> TextSink<W> {
    pub fn new(spool: W) -> TextSink<W> {
        TextSink { spool, objects: 0, bytes: 0 }
    }

    /// The spooled lines.
    pub fn finish(self) -> W {
        self.spool
    }
}

impl<W: Write> HeapSink for TextSink<W> {
    fn root(&mut self, root: &Root<'_>) -> io::Result<()> {
        lines::write_root(&mut self.spool, root)
    }

    fn class_dump(&mut self, _index: u32, class: &DumpClass, values: &ClassValues) -> io::Result<()> {
        let head = ClassLine {
            id: class.id(),
            name: class.name(),
            trace: NO_TRACE,
            super_id: class.super_id,
            loader_id: values.loader,
            signers_id: values.signers,
            domain_id: values.domain,
        };
        lines::write_class(&mut self.spool, &head)?;
        for (decl, &value) in class.statics.iter().zip(&values.statics) {
            if decl.ty == BasicType::Object && value != 0 {
                lines::write_class_static(&mut self.spool, &decl.name, value)?;
            }
        }
        for &(name, value) in &class.vm_statics {
            lines::write_class_static(&mut self.spool, name, value)?;
        }
        for &(index, id) in &values.constants {
            lines::write_class_constant(&mut self.spool, index, id)?;
        }
        Ok(())
    }

    fn wants_sizes(&self) -> bool {
        true
    }

    fn instance(&mut self, id: u64, class: &DumpClass, size: u64, values: &[u8]) -> io::Result<()> {
        self.objects += 1;
        self.bytes += size;
        lines::write_instance(&mut self.spool, id, size, NO_TRACE, class.name(), class.id())?;
        for slot in class.values.iter().filter(|s| s.ty == BasicType::Object) {
            let target = reference_at(values, slot.offset);
            if target != 0 {
                lines::write_instance_field(&mut self.spool, &slot.name, target)?;
            }
        }
        Ok(())
    }

    fn object_array_begin(&mut self, id: u64, class: &DumpClass, size: u64, length: u32) -> io::Result<()> {
        debug_assert_eq!(class.kind, ClassKind::ObjectArray);
        self.objects += 1;
        self.bytes += size;
        lines::write_object_array(&mut self.spool, id, size, NO_TRACE, length, class.name(), class.id())
    }

    fn object_array_element(&mut self, index: u32, id: u64) -> io::Result<()> {
        lines::write_array_element(&mut self.spool, index, id)
    }

    fn object_array_end(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn primitive_array(
        &mut self,
        id: u64,
        class_name: &str,
        size: u64,
        _ty: BasicType,
        length: u32,
        _elements: &[u8],
    ) -> io::Result<()> {
        self.objects += 1;
        self.bytes += size;
        lines::write_primitive_array(&mut self.spool, id, size, NO_TRACE, length, class_name)
    }
}
