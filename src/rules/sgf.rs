//! SGF FF[4] game records: read and write.
