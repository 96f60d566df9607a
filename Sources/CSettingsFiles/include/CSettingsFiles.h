#ifndef CSETTINGSFILES_H
#define CSETTINGSFILES_H

/// Starts writing the dirty pages of the open file `fd` to its device without waiting for them
/// (Linux's `sync_file_range(SYNC_FILE_RANGE_WRITE)`, which the C library declares only for
/// `_GNU_SOURCE`). Durability still needs a flush (`fsync`): this only lets the device work
/// while the caller does something else. Elsewhere it does nothing. Returns 0, or -1 with `errno`.
int settings_start_writeback(int fd);

#endif
