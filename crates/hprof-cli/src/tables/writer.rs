//! One Parquet file written row by row: rows gather in Arrow builders and go out as a record batch every
//! [`BATCH_ROWS`] rows, so a table of any length holds at most one batch and one row group in memory.

use arrow_array::builder::{BooleanBuilder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use private_files::{Finish, IfExists};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per record batch handed to the Parquet writer.
const BATCH_ROWS: usize = 64 * 1024;
/// Rows per row group: big enough for readers to skip by statistics, small enough to buffer; and a
/// bound in bytes, for rows with long strings.
const ROW_GROUP_ROWS: usize = 1024 * 1024;
const ROW_GROUP_BYTES: usize = 128 << 20;

/// A column's type. Every whole number is a signed 64-bit integer (Spark reads unsigned ones as decimals);
/// object ids fit, as addresses never use the top bit.
#[derive(Clone, Copy)]
pub enum Ty {
    Int,
    Str,
    Bool,
}

/// A cell of a row, in the column's type; `None` is SQL's NULL.
pub enum Cell<'a> {
    I(Option<i64>),
    S(Option<&'a str>),
    B(Option<bool>),
}

enum Builder {
    I(Int64Builder),
    S(StringBuilder),
    B(BooleanBuilder),
}

impl Builder {
    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::I(b) => Arc::new(b.finish()),
            Builder::S(b) => Arc::new(b.finish()),
            Builder::B(b) => Arc::new(b.finish()),
        }
    }
}

/// The schema of a table: (column, type, nullable).
pub fn schema(columns: &[(&str, Ty, bool)]) -> SchemaRef {
    let fields: Vec<Field> = columns
        .iter()
        .map(|&(name, ty, nullable)| {
            let dt = match ty {
                Ty::Int => DataType::Int64,
                Ty::Str => DataType::Utf8,
                Ty::Bool => DataType::Boolean,
            };
            Field::new(name, dt, nullable)
        })
        .collect();
    Arc::new(Schema::new(fields))
}

pub struct TableWriter {
    path: PathBuf,
    schema: SchemaRef,
    builders: Vec<Builder>,
    rows_in_batch: usize,
    rows: u64,
    writer: Option<ArrowWriter<BufWriter<File>>>,
    finish: Finish,
}

impl TableWriter {
    /// Creates `dir/<name>.parquet` (0600, a symlink there replaced, never followed; an existing file is
    /// replaced only when [`TableWriter::close`] succeeds).
    pub fn create(dir: &Path, name: &str, columns: &[(&str, Ty, bool)]) -> Result<TableWriter, String> {
        let path = dir.join(format!("{name}.parquet"));
        let created =
            private_files::create(&path, IfExists::Replace).map_err(|e| format!("{}: {e}", path.display()))?;
        let schema = schema(columns);
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
            .set_created_by(format!("hprof-rs {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = ArrowWriter::try_new(BufWriter::new(created.file), schema.clone(), Some(props))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let builders = columns
            .iter()
            .map(|&(_, ty, _)| match ty {
                Ty::Int => Builder::I(Int64Builder::with_capacity(BATCH_ROWS)),
                Ty::Str => Builder::S(StringBuilder::with_capacity(BATCH_ROWS, BATCH_ROWS * 16)),
                Ty::Bool => Builder::B(BooleanBuilder::with_capacity(BATCH_ROWS)),
            })
            .collect();
        Ok(TableWriter {
            path,
            schema,
            builders,
            rows_in_batch: 0,
            rows: 0,
            writer: Some(writer),
            finish: created.finish,
        })
    }

    /// Appends a row; its cells must follow the columns' order and types.
    pub fn row(&mut self, cells: &[Cell<'_>]) -> Result<(), String> {
        debug_assert_eq!(cells.len(), self.builders.len());
        for (b, c) in self.builders.iter_mut().zip(cells) {
            match (b, c) {
                (Builder::I(b), Cell::I(v)) => b.append_option(*v),
                (Builder::S(b), Cell::S(v)) => b.append_option(*v),
                (Builder::B(b), Cell::B(v)) => b.append_option(*v),
                _ => return Err(format!("{}: a cell of the wrong type (a bug)", self.path.display())),
            }
        }
        self.rows_in_batch += 1;
        self.rows += 1;
        if self.rows_in_batch >= BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        if self.rows_in_batch == 0 {
            return Ok(());
        }
        let columns: Vec<ArrayRef> = self.builders.iter_mut().map(Builder::finish).collect();
        self.rows_in_batch = 0;
        let batch = RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| self.error(e))?;
        match self.writer.as_mut() {
            Some(w) => w.write(&batch).map_err(|e| self.error(e)),
            None => Ok(()),
        }
    }

    fn error(&self, e: impl std::fmt::Display) -> String {
        format!("{}: {e}", self.path.display())
    }

    /// Writes what is left and the footer, and puts the file in place. Returns the rows written.
    pub fn close(mut self) -> Result<u64, String> {
        self.flush()?;
        if let Some(w) = self.writer.take() {
            let out = w.into_inner().map_err(|e| self.error(e))?;
            let file = out.into_inner().map_err(|e| self.error(e.error()))?;
            file.sync_all().map_err(|e| self.error(e))?;
        }
        self.finish.commit().map_err(|e| self.error(e))?;
        Ok(self.rows)
    }
}
