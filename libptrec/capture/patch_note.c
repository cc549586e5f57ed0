/* patch_note.c — the one line saying how the patchable function entries were patched
 * (capture/patch_entries.h), apart from the patcher so that the crash path, which prints it in
 * the dump's STATUS record, links only this buffer.  ASYNC-SIGNAL-SAFE: data only. */
#include "config.h"

#include "capture/patch_entries.h"

char ptrec_patch_note[192];
