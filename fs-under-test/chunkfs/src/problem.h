/* chunkfs — the checker's problem table, in e2fsck's manner: every
 * problem has a code (0xPPNNNN: pass PP, number NNNN), a message with
 * printf arguments, the question a fix answers, and whether preen (-p)
 * may fix it without asking.  Sorted by code, codes unique (a unit test
 * keeps it so).
 */
#ifndef CHUNKFS_PROBLEM_H
#define CHUNKFS_PROBLEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
  PR_0_SUPER_BAD = 0x000001,       /* primary superblock unreadable */
  PR_0_MAP_BAD = 0x000002,         /* a dirty-map block unreadable */
  PR_0_HEADER_BAD = 0x000003,      /* a chunk header unreadable */
  PR_0_CHUNK_LOST = 0x000004,      /* header and bitmaps unreadable */
  PR_0_INITMAP_BAD = 0x000005,     /* an initialised-chunks map block */
  PR_0_INITMAP_STALE = 0x000006,   /* a chunk in use the map calls unused */
  PR_1_ITABLE_BAD = 0x010001,      /* inode-table block unreadable */
  PR_1_INODE_BAD = 0x010002,       /* inode checksum or fields */
  PR_1_ITABLE_MARK_BIG = 0x010003, /* inode-table mark past the table */
  PR_1_ITABLE_MARK_LOW = 0x010004, /* an inode in use past the mark */
  PR_1_MAPPED_SHORT = 0x010006,    /* blocks beyond the mapped range */
  PR_1_CHAIN_BROKEN = 0x010007,    /* continuation link broken */
  PR_1_CONT_ORPHAN = 0x010008,     /* continuation its head does not reach */
  PR_1_BACKREFS_BAD = 0x010009,    /* back-reference table unreadable */
  PR_1_DIR_SIZE = 0x01000A,        /* directory size not whole blocks */
  PR_1_EXTENT_BAD = 0x010020,      /* extent out of range, order; twice */
  PR_1_LEAF_BAD = 0x010021,        /* CHKE leaf unreadable or not its own */
  PR_1_EXTMAP_HEADER = 0x010022,   /* extent map header impossible */
  PR_1_SPECIAL_MAP = 0x010030,     /* special file maps or continues */
  PR_1_SPECIAL_SIZE = 0x010031,    /* special file with a size */
  PR_1_SPECIAL_RDEV = 0x010032,    /* fifo or socket with a device number */
  PR_1_XATTR_AREA_BAD = 0x010101,  /* in-inode extended attributes */
  PR_1_XATTR_BLOCK_BAD = 0x010102, /* xattr block unusable */
  PR_2_DIR_BLOCK_BAD = 0x020001,   /* directory block unreadable */
  PR_2_ENTRY_TARGET = 0x020002,    /* entry names no inode in use */
  PR_2_ENTRY_GEN = 0x020003,       /* entry names an older generation */
  PR_2_ENTRY_TYPE = 0x020004,      /* entry's type differs from inode's */
  PR_2_DIR_LINKED = 0x020005,      /* a second entry naming a directory */
  PR_2_BACKREF_MISSING = 0x020006, /* cross-chunk entry without back-ref */
  PR_3_DIR_UNCONNECTED = 0x030001, /* directory no parent names */
  PR_3_PARENT_WRONG = 0x030002,    /* directory's parent field wrong */
  PR_4_BACKREF_STALE = 0x040001,   /* back-reference without its entry */
  PR_4_ORPHAN = 0x040002,          /* file no entry names */
  PR_4_UNLINKED = 0x040003,        /* unnamed file with no links: free */
  PR_4_LINK_COUNT = 0x040004,      /* link count differs */
  PR_4_NO_LOST_FOUND = 0x040005,   /* lost+found unusable */
  PR_5_BLOCK_BITMAP = 0x050001,    /* block bitmap differs */
  PR_5_INODE_BITMAP = 0x050002,    /* inode bitmap differs */
  PR_5_COUNTS = 0x050003,          /* free counts in the header differ */
  PR_5_BACKREFS = 0x050004,        /* back-reference table rewritten */
};

#define PR_PREEN_OK 1u /* -p fixes it without asking */

struct cfs_problem {
  uint32_t code;
  const char *msg;    /* printf format */
  const char *prompt; /* "Clear", "Fix", ... */
  unsigned flags;
};

extern const struct cfs_problem cfs_problems[];
extern const size_t cfs_nproblems;

/* The entry for code, or NULL. */
extern const struct cfs_problem *cfs_problem (uint32_t code);

#endif
