/* chunkfs — extended attributes and POSIX ACLs (fs.h, fs-internal.h).
 *
 * An inode's attributes are one list of entries (FORMAT.md, "Extended
 * attributes"), kept whole in one place: in the inode's 100 bytes when
 * the list fits there, else in one xattr block of the inode's chunk.
 * Every change rewrites the list where it now fits, so a list never
 * straddles the two and the checker has one place to look.
 *
 * ACLs are the kernel's xattr form of them.  With FUSE_POSIX_ACL the
 * kernel enforces them but leaves the rest to the file system, as it
 * does for ext4's own set_acl: the mode follows the access ACL, chmod
 * rewrites the access ACL, and a new file inherits its directory's
 * default ACL.  That is done here.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fs-internal.h"

/* The namespaces an entry's first byte names. */
static const struct {
  const char *prefix;
  bool whole; /* the prefix is the whole name (ACLs) */
} ns_tab[] = {
    [CFS_XATTR_USER] = {"user.", false},
    [CFS_XATTR_TRUSTED] = {"trusted.", false},
    [CFS_XATTR_SECURITY] = {"security.", false},
    [CFS_XATTR_ACL_ACCESS] = {"system.posix_acl_access", true},
    [CFS_XATTR_ACL_DEFAULT] = {"system.posix_acl_default", true},
};
#define NS_COUNT (sizeof ns_tab / sizeof ns_tab[0])

static bool acl_valid (const unsigned char *v, size_t len);

int
cfs_xattr_scan (const unsigned char *area, size_t len, struct cfs_xent *ents,
                size_t max, size_t *n, const char **why)
{
  size_t off = 0, k = 0, j;

  while (off + 4 <= len && area[off] != 0) {
    struct cfs_xent e = {area[off], area[off + 1], cfs_get16 (area + off + 2),
                         area + off + 4, NULL};
    if (e.ns >= NS_COUNT || ns_tab[e.ns].prefix == NULL)
      return *why = "unknown namespace", -1;
    if (ns_tab[e.ns].whole ? e.nlen != 0 : e.nlen == 0)
      return *why = "bad name length", -1;
    if (off + 4 + e.nlen + e.vlen > len)
      return *why = "entry runs past the end", -1;
    if (memchr (e.name, '\0', e.nlen))
      return *why = "NUL in a name", -1;
    if (strlen (ns_tab[e.ns].prefix) + e.nlen > 255)
      return *why = "name longer than 255 bytes", -1;
    e.value = e.name + e.nlen;
    if (ns_tab[e.ns].whole && !acl_valid (e.value, e.vlen))
      return *why = "an invalid ACL", -1;
    for (j = 0; j < k; j++)
      if (ents[j].ns == e.ns && ents[j].nlen == e.nlen &&
          !memcmp (ents[j].name, e.name, e.nlen))
        return *why = "a name twice", -1;
    if (k == max)
      return *why = "too many entries", -1;
    ents[k++] = e;
    off += 4 + e.nlen + e.vlen;
  }
  for (; off < len; off++)
    if (area[off])
      return *why = "bytes after the last entry", -1;
  *n = k;
  return 0;
}

size_t
cfs_xattr_list_len (const unsigned char *area, size_t len)
{
  size_t off = 0;

  while (off + 4 <= len && area[off] != 0)
    off += 4u + area[off + 1] + cfs_get16 (area + off + 2);
  return off;
}

/* The namespace and the rest of a full name: 0, or -errno. */
static int
parse_name (const char *name, uint8_t *ns, const char **rest)
{
  size_t len = strlen (name);
  uint8_t k;

  if (len == 0 || len > 255)
    return len ? -ERANGE : -EINVAL;
  for (k = 1; k < NS_COUNT; k++) {
    size_t pl = strlen (ns_tab[k].prefix);
    if (strncmp (name, ns_tab[k].prefix, pl) != 0)
      continue;
    if (ns_tab[k].whole ? name[pl] != '\0' : name[pl] == '\0')
      continue;
    *ns = k;
    *rest = name + pl;
    return 0;
  }
  /* "user." alone, or an unknown namespace. */
  for (k = 1; k < NS_COUNT; k++)
    if (!ns_tab[k].whole && strcmp (name, ns_tab[k].prefix) == 0)
      return -EINVAL;
  return -EOPNOTSUPP;
}

/* A list of entries being read or changed. */
struct xlist {
  unsigned char b[CFS_XATTR_END - CFS_XATTR_START];
  size_t len;
};

/* n's xattr block, read and checked as its own. */
static int
get_block (struct cfs_fs *fs, const struct ino *n, struct cblk **b)
{
  uint32_t local = n->in.xattr_block;

  if (local < fs->g.first_data || local >= fs->g.chunk_blocks)
    return cfs_fs_eio (fs, "inode (%u, %u): xattr block %u outside its data",
                       n->c, n->i, local);
  if ((*b = cfs_cache_get (fs, n->c, local, CBLK_META, CFS_MAGIC_XATTR,
                           false)) == NULL)
    return -EIO;
  if (cfs_get32 ((*b)->d + CFS_HEADER_SIZE) != n->i ||
      cfs_get32 ((*b)->d + CFS_HEADER_SIZE + 4) != n->in.generation) {
    cfs_damaged (fs, n->c);
    return cfs_fs_eio (fs, "inode (%u, %u): xattr block %u is another's", n->c,
                       n->i, local);
  }
  return 0;
}

static int
load (struct cfs_fs *fs, const struct ino *n, struct xlist *x)
{
  struct cfs_xent ents[CFS_XATTR_MAX_ENTRIES];
  const unsigned char *area = n->in.xattr;
  size_t len = sizeof n->in.xattr, cnt;
  const char *why;
  struct cblk *b;
  int r;

  if (n->in.xattr_block) {
    if ((r = get_block (fs, n, &b)) < 0)
      return r;
    area = b->d + CFS_XATTR_START;
    len = CFS_XATTR_END - CFS_XATTR_START;
  } else if (n->in.flags & CFS_INODE_INLINE) {
    x->len = 0;
    return 0;
  }
  if (cfs_xattr_scan (area, len, ents, CFS_XATTR_MAX_ENTRIES, &cnt, &why) ==
      -1) {
    cfs_damaged (fs, n->c);
    return cfs_fs_eio (fs, "inode (%u, %u): extended attributes: %s", n->c,
                       n->i, why);
  }
  x->len = cfs_xattr_list_len (area, len);
  memcpy (x->b, area, x->len);
  return 0;
}

/* The list written where it fits (n in memory; the caller writes n). */
static int
store (struct cfs_fs *fs, struct ino *n, const struct xlist *x)
{
  struct cblk *b;
  uint32_t local;
  int r;

  if (x->len == 0 ||
      (x->len <= sizeof n->in.xattr && !(n->in.flags & CFS_INODE_INLINE))) {
    memset (n->in.xattr, 0, sizeof n->in.xattr);
    memcpy (n->in.xattr, x->b, x->len);
    if (n->in.xattr_block &&
        (r = cfs_free_block (fs, n->c, n->in.xattr_block)) < 0)
      return r;
    n->in.xattr_block = 0;
    return 0;
  }
  if (x->len > sizeof x->b)
    return -ENOSPC;
  if ((r = cfs_touch (fs, n->c)) < 0)
    return r;
  if (n->in.xattr_block == 0) {
    if ((r = cfs_alloc_block (fs, n->c, 0, true, &local)) < 0)
      return r;
    if (local == 0)
      return -ENOSPC;
    if ((b = cfs_cache_get (fs, n->c, local, CBLK_META, CFS_MAGIC_XATTR,
                            true)) == NULL)
      return -EIO;
    n->in.xattr_block = local;
  } else if ((r = get_block (fs, n, &b)) < 0)
    return r;
  memset (b->d + CFS_HEADER_SIZE, 0, CFS_XATTR_END - CFS_HEADER_SIZE);
  cfs_put32 (b->d + CFS_HEADER_SIZE, n->i);
  cfs_put32 (b->d + CFS_HEADER_SIZE + 4, n->in.generation);
  memcpy (b->d + CFS_XATTR_START, x->b, x->len);
  cfs_cache_dirty (fs, b);
  memset (n->in.xattr, 0, sizeof n->in.xattr);
  return 0;
}

/* The entry (ns, name) of x: its offset, or -1. */
static long
find (const struct xlist *x, uint8_t ns, const char *name)
{
  size_t off = 0, nl = strlen (name);

  while (off < x->len) {
    size_t el = 4u + x->b[off + 1] + cfs_get16 (x->b + off + 2);
    if (x->b[off] == ns && x->b[off + 1] == nl &&
        !memcmp (x->b + off + 4, name, nl))
      return (long)off;
    off += el;
  }
  return -1;
}

static void
drop (struct xlist *x, size_t off)
{
  size_t el = 4u + x->b[off + 1] + cfs_get16 (x->b + off + 2);

  memmove (x->b + off, x->b + off + el, x->len - off - el);
  x->len -= el;
}

static int
append (struct xlist *x, uint8_t ns, const char *name, const void *v,
        size_t vlen)
{
  size_t nl = strlen (name);

  if (vlen > UINT16_MAX || x->len + 4 + nl + vlen > sizeof x->b)
    return -ENOSPC;
  x->b[x->len] = ns;
  x->b[x->len + 1] = (uint8_t)nl;
  cfs_put16 (x->b + x->len + 2, (uint16_t)vlen);
  memcpy (x->b + x->len + 4, name, nl);
  if (vlen)
    memcpy (x->b + x->len + 4 + nl, v, vlen);
  x->len += 4 + nl + vlen;
  return 0;
}

/* ---- ACLs: the kernel's xattr form (posix_acl_xattr.h) ---- */

#define ACL_VERSION   2
#define ACL_USER_OBJ  0x01
#define ACL_USER      0x02
#define ACL_GROUP_OBJ 0x04
#define ACL_GROUP     0x08
#define ACL_MASK      0x10
#define ACL_OTHER     0x20
#define ACL_MAX       ((CFS_XATTR_END - CFS_XATTR_START) / 8)

struct acl {
  uint32_t n;
  struct {
    uint16_t tag, perm;
    uint32_t id;
  } e[ACL_MAX];
};

/* A valid ACL as the kernel checks one (posix_acl_valid): one owner,
 * owning group and other entry, a mask when there are named entries,
 * tags in order.  0, or -EINVAL.
 */
static int
acl_decode (const unsigned char *v, size_t len, struct acl *a)
{
  uint32_t k, seen = 0;
  uint16_t last = 0;

  if (len < 4 || (len - 4) % 8 || (len - 4) / 8 > ACL_MAX ||
      cfs_get32 (v) != ACL_VERSION)
    return -EINVAL;
  a->n = (uint32_t)(len - 4) / 8;
  for (k = 0; k < a->n; k++) {
    const unsigned char *p = v + 4 + 8 * k;
    uint16_t tag = cfs_get16 (p);
    a->e[k].tag = tag;
    a->e[k].perm = cfs_get16 (p + 2);
    a->e[k].id = cfs_get32 (p + 4);
    if (a->e[k].perm & ~7u || tag < last ||
        (tag == last && tag != ACL_USER && tag != ACL_GROUP) ||
        (tag & (tag - 1)) || tag > ACL_OTHER)
      return -EINVAL;
    seen |= tag;
    last = tag;
  }
  if ((seen & (ACL_USER_OBJ | ACL_GROUP_OBJ | ACL_OTHER)) !=
          (ACL_USER_OBJ | ACL_GROUP_OBJ | ACL_OTHER) ||
      ((seen & (ACL_USER | ACL_GROUP)) && !(seen & ACL_MASK)))
    return -EINVAL;
  return 0;
}

static bool
acl_valid (const unsigned char *v, size_t len)
{
  struct acl a;

  return acl_decode (v, len, &a) == 0;
}

static size_t
acl_encode (const struct acl *a, unsigned char *v)
{
  uint32_t k;

  cfs_put32 (v, ACL_VERSION);
  for (k = 0; k < a->n; k++) {
    cfs_put16 (v + 4 + 8 * k, a->e[k].tag);
    cfs_put16 (v + 6 + 8 * k, a->e[k].perm);
    cfs_put32 (v + 8 + 8 * k, a->e[k].id);
  }
  return 4 + 8 * (size_t)a->n;
}

/* The permission bits an access ACL gives the mode (posix_acl_equiv_mode):
 * true when the mode says all the ACL says.
 */
static bool
acl_mode (const struct acl *a, uint16_t *mode)
{
  uint16_t m = 0;
  bool equiv = true;
  uint32_t k;

  for (k = 0; k < a->n; k++)
    switch (a->e[k].tag) {
      case ACL_USER_OBJ:
        m |= (uint16_t)(a->e[k].perm << 6);
        break;
      case ACL_GROUP_OBJ:
        m |= (uint16_t)(a->e[k].perm << 3);
        break;
      case ACL_OTHER:
        m |= a->e[k].perm;
        break;
      case ACL_MASK:
        m = (uint16_t)((m & ~070) | a->e[k].perm << 3);
        equiv = false;
        break;
      default:
        equiv = false;
    }
  *mode = (uint16_t)((*mode & ~0777) | m);
  return equiv;
}

/* The ACL rewritten to the mode (posix_acl_chmod), or to the mode a new
 * file asks for, narrowing both (with masq: posix_acl_create_masq).
 */
static void
acl_fit (struct acl *a, uint16_t *mode, bool masq)
{
  uint16_t m = *mode, *group = NULL;
  uint32_t k;

  for (k = 0; k < a->n; k++) {
    uint16_t *p = &a->e[k].perm;
    switch (a->e[k].tag) {
      case ACL_USER_OBJ:
        *p = masq ? *p & (m >> 6 & 7) : (m >> 6 & 7);
        break;
      case ACL_OTHER:
        *p = masq ? *p & (m & 7) : (m & 7);
        break;
      case ACL_GROUP_OBJ:
        if (group == NULL)
          group = p;
        break;
      case ACL_MASK:
        group = p;
        break;
    }
  }
  if (group)
    *group = masq ? *group & (m >> 3 & 7) : (m >> 3 & 7);
  if (masq)
    acl_mode (a, mode);
}

/* ---- the operations ---- */

static int
get_value (struct cfs_fs *fs, uint64_t ino, uint8_t ns, const char *rest,
           void *buf, size_t len)
{
  struct xlist x;
  struct ino n;
  long off;
  size_t vl;
  int r;

  if ((r = cfs_iget_file (fs, ino, &n)) < 0 || (r = load (fs, &n, &x)) < 0)
    return r;
  if ((off = find (&x, ns, rest)) < 0)
    return -ENODATA;
  vl = cfs_get16 (x.b + off + 2);
  if (len == 0)
    return (int)vl;
  if (len < vl)
    return -ERANGE;
  memcpy (buf, x.b + off + 4 + x.b[off + 1], vl);
  return (int)vl;
}

ssize_t
cfs_getxattr (struct cfs_fs *fs, uint64_t ino, const char *name, void *buf,
              size_t len)
{
  const char *rest;
  uint8_t ns;
  int r;

  if ((r = parse_name (name, &ns, &rest)) < 0)
    return r;
  return get_value (fs, ino, ns, rest, buf, len);
}

/* Entry (ns, rest) of n's list set to value (or removed) under the
 * flags, with what an access ACL means for the mode; n written.
 */
static int
set_value (struct cfs_fs *fs, struct ino *n, uint8_t ns, const char *rest,
           const void *value, size_t vlen, unsigned flags, bool remove)
{
  struct xlist x;
  long off;
  int r;

  if ((r = load (fs, n, &x)) < 0)
    return r;
  off = find (&x, ns, rest);
  if (off >= 0 && (flags & CFS_XATTR_CREATE))
    return -EEXIST;
  if (off < 0 && (flags & CFS_XATTR_REPLACE))
    return -ENODATA;
  if (ns == CFS_XATTR_ACL_ACCESS && !remove) {
    struct acl a;
    if ((r = acl_decode (value, vlen, &a)) < 0)
      return r;
    if (acl_mode (&a, &n->in.mode))
      remove = true; /* the mode says it all: no ACL kept */
  }
  if (off >= 0)
    drop (&x, (size_t)off);
  if (!remove && (r = append (&x, ns, rest, value, vlen)) < 0)
    return r;
  if ((r = store (fs, n, &x)) < 0)
    return r;
  n->in.ctime = cfs_now_ns ();
  return cfs_iput (fs, n);
}

/* What setting and removing share: the name parsed, the inode in use,
 * the file system writable; the errors in the order the kernel's
 * callers expect (a bad name before a read-only file system).
 */
static int
change_begin (struct cfs_fs *fs, uint64_t ino, const char *name, struct ino *n,
              uint8_t *ns, const char **rest)
{
  int r;

  if ((r = parse_name (name, ns, rest)) < 0 ||
      (r = cfs_iget_file (fs, ino, n)) < 0)
    return r;
  return fs->writable ? 0 : -EROFS;
}

int
cfs_setxattr (struct cfs_fs *fs, uint64_t ino, const char *name,
              const void *value, size_t len, unsigned flags)
{
  const char *rest;
  struct ino n;
  uint8_t ns;
  int r;

  if ((r = change_begin (fs, ino, name, &n, &ns, &rest)) < 0)
    return r;
  if (flags & ~(CFS_XATTR_CREATE | CFS_XATTR_REPLACE) ||
      flags == (CFS_XATTR_CREATE | CFS_XATTR_REPLACE))
    return -EINVAL;
  if (ns == CFS_XATTR_ACL_DEFAULT) {
    struct acl a;
    if (!S_ISDIR (n.in.mode))
      return -EACCES; /* as the kernel: only directories have one */
    if ((r = acl_decode (value, len, &a)) < 0)
      return r;
  }
  if (len > CFS_XATTR_END - CFS_XATTR_START)
    return -ENOSPC;
  return set_value (fs, &n, ns, rest, value, len, flags, false);
}

int
cfs_removexattr (struct cfs_fs *fs, uint64_t ino, const char *name)
{
  const char *rest;
  struct ino n;
  uint8_t ns;
  int r;

  if ((r = change_begin (fs, ino, name, &n, &ns, &rest)) < 0)
    return r;
  return set_value (fs, &n, ns, rest, NULL, 0, CFS_XATTR_REPLACE, true);
}

ssize_t
cfs_listxattr (struct cfs_fs *fs, uint64_t ino, char *buf, size_t len)
{
  struct xlist x;
  size_t off, total = 0;
  struct ino n;
  int r;

  if ((r = cfs_iget_file (fs, ino, &n)) < 0 || (r = load (fs, &n, &x)) < 0)
    return r;
  for (off = 0; off < x.len;
       off += 4u + x.b[off + 1] + cfs_get16 (x.b + off + 2)) {
    const char *p = ns_tab[x.b[off]].prefix;
    size_t pl = strlen (p), nl = x.b[off + 1];
    if (len && total + pl + nl + 1 > len)
      return -ERANGE;
    if (len) {
      memcpy (buf + total, p, pl);
      memcpy (buf + total + pl, x.b + off + 4, nl);
      buf[total + pl + nl] = '\0';
    }
    total += pl + nl + 1;
  }
  return (ssize_t)total;
}

/* Inode ino's attributes as they are now (what cfs_getattr returns). */
static int
attr_now (struct cfs_fs *fs, uint64_t ino, struct cfs_attr *a)
{
  struct ino n;
  int r;

  if ((r = cfs_iget_file (fs, ino, &n)) < 0)
    return r;
  return cfs_inode_attr (fs, &n, a);
}

int
cfs_acl_inherit (struct cfs_fs *fs, uint64_t dir, uint64_t ino, uint32_t umask,
                 struct cfs_attr *a)
{
  unsigned char v[CFS_XATTR_END - CFS_XATTR_START];
  struct acl acl;
  struct ino n;
  int len, r;

  if ((r = cfs_iget_file (fs, ino, &n)) < 0)
    return r;
  len = get_value (fs, dir, CFS_XATTR_ACL_DEFAULT, "", v, sizeof v);
  if (len == -ENODATA || S_ISLNK (n.in.mode)) {
    if (!S_ISLNK (n.in.mode)) {
      n.in.mode = (uint16_t)(n.in.mode & ~(umask & 0777));
      if ((r = cfs_iput (fs, &n)) < 0)
        return r;
    }
    return attr_now (fs, ino, a);
  }
  if (len < 0)
    return len;
  if ((r = acl_decode (v, (size_t)len, &acl)) < 0)
    return cfs_fs_eio (fs, "directory (%u, %u): its default ACL is invalid",
                       ref_chunk (dir), ref_ino (dir));
  if (S_ISDIR (n.in.mode) && (r = set_value (fs, &n, CFS_XATTR_ACL_DEFAULT, "",
                                             v, (size_t)len, 0, false)) < 0)
    return r;
  acl_fit (&acl, &n.in.mode, true);
  len = (int)acl_encode (&acl, v);
  /* An ACL the mode says all of is not kept (set_value knows). */
  if ((r = set_value (fs, &n, CFS_XATTR_ACL_ACCESS, "", v, (size_t)len, 0,
                      false)) < 0)
    return r;
  return attr_now (fs, ino, a);
}

int
cfs_acl_chmod (struct cfs_fs *fs, struct ino *n)
{
  unsigned char v[CFS_XATTR_END - CFS_XATTR_START];
  struct acl acl;
  struct xlist x;
  long off;
  size_t vl;
  int r;

  if ((r = load (fs, n, &x)) < 0)
    return r;
  if ((off = find (&x, CFS_XATTR_ACL_ACCESS, "")) < 0)
    return 0;
  vl = cfs_get16 (x.b + off + 2);
  if (acl_decode (x.b + off + 4, vl, &acl) < 0)
    return cfs_fs_eio (fs, "inode (%u, %u): its access ACL is invalid", n->c,
                       n->i);
  acl_fit (&acl, &n->in.mode, false);
  vl = acl_encode (&acl, v);
  drop (&x, (size_t)off);
  if ((r = append (&x, CFS_XATTR_ACL_ACCESS, "", v, vl)) < 0)
    return r;
  return store (fs, n, &x);
}

int
cfs_xattr_free (struct cfs_fs *fs, struct ino *n)
{
  int r;

  if (n->in.xattr_block &&
      (r = cfs_free_block (fs, n->c, n->in.xattr_block)) < 0)
    return r;
  n->in.xattr_block = 0;
  memset (n->in.xattr, 0, sizeof n->in.xattr);
  return 0;
}
