/* futuredisk — nbdplugin: the emulated disk's faults (see faults.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "faults.h"
#include "faultmodels/units.h"
#include "faultmodels/rng.h"
#include "json.h"

struct dfaults {
  struct dfaults_config cfg;    /* as given (log_path is not kept) */
  struct fm_faultmap *map;      /* unreadable sectors */
  struct fm_faultmap *remapped; /* sectors living on spares */
  FILE *log;
  double p_sector;     /* chance a sector is unreadable, from ber */
  uint64_t generation; /* writes so far: the re-roll's generation */
  uint64_t attempts;   /* reads that ran into a bad sector so far */
  uint64_t writes;     /* writes whose fate was decided so far */
  uint64_t reads;      /* reads so far: each draws its own flips */
  uint64_t spares;     /* spare sectors left */
  uint64_t fail_at_ns; /* UINT64_MAX: never (inject moves it) */
  bool failure_logged;
  uint64_t hits[FM_FAULT_NKINDS]; /* faults that happened, by kind */
};

/* One ground-truth line; flushed at once, so a crash loses none. */
static void
log_event (struct dfaults *f, uint64_t now, const char *event,
           enum fm_fault_kind kind, uint64_t offset, uint64_t length,
           const char *detail)
{
  if (f->log == NULL)
    return;
  fprintf (f->log,
           "{\"virtual_ns\": %" PRIu64 ", \"event\": \"%s\", \"kind\": "
           "\"%s\", \"offset\": %" PRIu64 ", \"length\": %" PRIu64
           ", \"detail\": ",
           now, event, fm_fault_name (kind), offset, length);
  fd_json_string (f->log, detail);
  fputs ("}\n", f->log);
  fflush (f->log);
}

/* One marginal sector of the fresh disk (fm_ure_marginal's callback). */
static void
add_marginal (void *opaque, uint64_t sector)
{
  struct dfaults *f = opaque;
  char detail[64];

  if (fm_faultmap_add (f->map, sector, 1, FM_FAULT_URE) == -1)
    return; /* out of memory: counted as missing by the caller */
  snprintf (detail, sizeof detail, "ber=%g: marginal sector", f->cfg.ber);
  log_event (f, 0, "inject", FM_FAULT_URE, sector * f->cfg.sector,
             f->cfg.sector, detail);
}

struct dfaults *
dfaults_new (const struct dfaults_config *cfg, struct fm_err *err)
{
  struct dfaults *f = calloc (1, sizeof *f);

  if (f == NULL || (f->map = fm_faultmap_new ()) == NULL) {
    free (f);
    snprintf (err->msg, sizeof err->msg, "out of memory");
    return NULL;
  }
  f->cfg = *cfg;
  f->cfg.log_path = NULL;
  f->p_sector =
      cfg->ber > 0 ? fm_ure_sector_probability (cfg->ber, cfg->sector) : 0;
  f->fail_at_ns = cfg->fail_at_ns ? cfg->fail_at_ns : UINT64_MAX;
  f->spares = cfg->spares;
  if ((f->remapped = fm_faultmap_new ()) == NULL) {
    snprintf (err->msg, sizeof err->msg, "out of memory");
    dfaults_free (f);
    return NULL;
  }
  if (cfg->log_path && (f->log = fopen (cfg->log_path, "w")) == NULL) {
    snprintf (err->msg, sizeof err->msg, "faultlog: %s: %s", cfg->log_path,
              fd_strerror (errno));
    dfaults_free (f);
    return NULL;
  }
  if (f->p_sector > 0) {
    uint64_t n = fm_ure_marginal (f->cfg.seed, f->cfg.disk_size / f->cfg.sector,
                                  f->p_sector, add_marginal, f);
    if (n > 0 && fm_faultmap_sectors (f->map) == 0) {
      snprintf (err->msg, sizeof err->msg,
                "out of memory placing %llu marginal sectors",
                (unsigned long long)n);
      dfaults_free (f);
      return NULL;
    }
  }
  return f;
}

void
dfaults_free (struct dfaults *f)
{
  if (f) {
    if (f->log)
      fclose (f->log);
    fm_faultmap_free (f->map);
    fm_faultmap_free (f->remapped);
    free (f);
  }
}

int
dfaults_inject (struct dfaults *f, uint64_t now, enum fm_fault_kind kind,
                uint64_t offset, uint64_t length, const char *source,
                struct fm_err *err)
{
  uint64_t first = offset / f->cfg.sector;
  uint64_t last = (offset + length + f->cfg.sector - 1) / f->cfg.sector;

  if (offset >= f->cfg.disk_size || length > f->cfg.disk_size - offset) {
    snprintf (err->msg, sizeof err->msg,
              "inject %s: %" PRIu64 "+%" PRIu64 " is outside the %" PRIu64
              "-byte disk",
              fm_fault_name (kind), offset, length, f->cfg.disk_size);
    return -1;
  }
  switch (kind) {
    case FM_FAULT_URE:
      if (length == 0) {
        snprintf (err->msg, sizeof err->msg, "inject ure: length is 0");
        return -1;
      }
      if (fm_faultmap_add (f->map, first, last - first, kind) == -1) {
        snprintf (err->msg, sizeof err->msg, "inject: out of memory");
        return -1;
      }
      /* The log says which whole sectors went bad. */
      offset = first * f->cfg.sector;
      length = (last - first) * f->cfg.sector;
      break;
    case FM_FAULT_DISK_FAILURE:
      if (now < f->fail_at_ns)
        f->fail_at_ns = now;
      break;
    case FM_FAULT_POWERCUT:
    case FM_FAULT_TORN_WRITE:
    case FM_FAULT_LOST_WRITE:
    case FM_FAULT_MISDIRECTED_WRITE:
    case FM_FAULT_FLIP:
    case FM_FAULT_REALLOCATED:
      snprintf (err->msg, sizeof err->msg,
                "inject %s: not a fault of sectors; it happens to requests "
                "(powercut, powercut-after=, lost-write=, "
                "misdirected-write=, flip-rate=)",
                fm_fault_name (kind));
      return -1;
    case FM_FAULT_NKINDS:
      abort ();
  }
  log_event (f, now, "inject", kind, offset, length, source);
  return 0;
}

static int
failed_disk (struct dfaults *f, uint64_t now, struct fm_err *err)
{
  if (now < f->fail_at_ns)
    return 0;
  if (!f->failure_logged) {
    char detail[64];
    snprintf (detail, sizeof detail, "failed at virtual_ns=%" PRIu64,
              f->fail_at_ns);
    log_event (f, now, "trigger", FM_FAULT_DISK_FAILURE, 0, f->cfg.disk_size,
               detail);
    f->failure_logged = true;
  }
  f->hits[FM_FAULT_DISK_FAILURE]++;
  snprintf (err->msg, sizeof err->msg, "the disk has failed (disk-failure)");
  errno = EIO;
  return -1;
}

int
dfaults_read (struct dfaults *f, uint64_t now, uint64_t offset, uint64_t count,
              uint64_t *extra_ns, struct fm_err *err)
{
  uint64_t first = offset / f->cfg.sector, bad, bad_n;
  uint64_t n = (offset + count + f->cfg.sector - 1) / f->cfg.sector - first;
  enum fm_fault_kind kind;
  char detail[96];

  *extra_ns = 0;
  if (failed_disk (f, now, err) == -1)
    return -1;
  while (count > 0 &&
         fm_faultmap_find (f->map, first, n, &bad, &bad_n, &kind)) {
    /* The drive retries the bad sector until it gives up ... */
    *extra_ns += f->cfg.erc_ns;
    f->attempts++;
    if (f->cfg.ure_recover > 0 &&
        fm_unit (fm_hash (f->cfg.seed, FM_STREAM_URE_RETRY, bad, f->attempts)) <
            f->cfg.ure_recover) {
      /* ... or until a retry reads it after all: the data comes back and
       * the drive rewrites the sector, which reads again from now on.
       */
      snprintf (detail, sizeof detail,
                "recovered on retry after erc_ns=%" PRIu64, f->cfg.erc_ns);
      log_event (f, now, "recover", kind, bad * f->cfg.sector, f->cfg.sector,
                 detail);
      if (fm_faultmap_clear (f->map, bad, 1) == -1) {
        snprintf (err->msg, sizeof err->msg, "out of memory");
        errno = ENOMEM;
        return -1;
      }
      continue;
    }
    f->hits[kind]++;
    snprintf (detail, sizeof detail, "read failed after erc_ns=%" PRIu64,
              f->cfg.erc_ns);
    log_event (f, now, "trigger", kind, bad * f->cfg.sector,
               bad_n * f->cfg.sector, detail);
    snprintf (err->msg, sizeof err->msg,
              "unrecoverable read error at sector %" PRIu64 " (byte %" PRIu64
              ", %s)",
              bad, bad * f->cfg.sector, fm_fault_name (kind));
    errno = EIO;
    return -1;
  }
  return 0;
}

/* A write over pending sectors: each is rewritten in place, or with
 * chance realloc_p moved to a spare (logged; later accesses detour).  No
 * spare left: the write fails, as drives fail it.
 */
static int
reallocate (struct dfaults *f, uint64_t now, uint64_t first, uint64_t last,
            struct fm_err *err)
{
  uint64_t s = first, bad, n;
  enum fm_fault_kind kind;

  while (s < last && fm_faultmap_find (f->map, s, last - s, &bad, &n, &kind)) {
    for (s = bad; s < bad + n; s++) {
      char detail[64];

      if (fm_unit (fm_hash (f->cfg.seed, FM_STREAM_LSE, s, f->generation)) >=
          f->cfg.realloc)
        continue; /* rewritten in place */
      if (f->spares == 0) {
        log_event (f, now, "trigger", FM_FAULT_REALLOCATED, s * f->cfg.sector,
                   f->cfg.sector, "no spare sector left: write failed");
        snprintf (err->msg, sizeof err->msg,
                  "write failed: sector %" PRIu64 " needs a spare and none "
                  "is left",
                  s);
        errno = EIO;
        return -1;
      }
      f->spares--;
      if (fm_faultmap_add (f->remapped, s, 1, FM_FAULT_REALLOCATED) == -1) {
        snprintf (err->msg, sizeof err->msg, "out of memory");
        errno = ENOMEM;
        return -1;
      }
      f->hits[FM_FAULT_REALLOCATED]++;
      snprintf (detail, sizeof detail, "moved to a spare, %" PRIu64 " left",
                f->spares);
      log_event (f, now, "trigger", FM_FAULT_REALLOCATED, s * f->cfg.sector,
                 f->cfg.sector, detail);
    }
  }
  return 0;
}

uint64_t
dfaults_remapped_runs (const struct dfaults *f, uint64_t offset, uint64_t count)
{
  uint64_t first = offset / f->cfg.sector;
  uint64_t last = (offset + count + f->cfg.sector - 1) / f->cfg.sector, bad, n;
  uint64_t runs = 0;
  enum fm_fault_kind kind;

  while (first < last &&
         fm_faultmap_find (f->remapped, first, last - first, &bad, &n, &kind)) {
    runs++;
    first = bad + n;
  }
  return runs;
}

int
dfaults_write (struct dfaults *f, uint64_t now, uint64_t offset, uint64_t count,
               struct fm_err *err)
{
  uint64_t first = offset / f->cfg.sector;
  uint64_t last = (offset + count + f->cfg.sector - 1) / f->cfg.sector, s;

  if (failed_disk (f, now, err) == -1)
    return -1;
  if (count == 0)
    return 0;
  /* A rewritten sector reads again (the drive rewrote it in place).  A
   * partial write of a bad sector counts as rewriting it: the drive
   * merges the new bytes into the sector it writes.
   */
  if (f->cfg.realloc > 0 && reallocate (f, now, first, last, err) == -1)
    return -1;
  if (fm_faultmap_clear (f->map, first, last - first) == -1)
    goto oom;
  /* ... but a written sector may come out marginal again. */
  f->generation++;
  for (s = first; f->p_sector > 0 && s < last; s++) {
    if (fm_ure_reroll (f->cfg.seed, s, f->generation, f->p_sector)) {
      char detail[64];

      if (fm_faultmap_add (f->map, s, 1, FM_FAULT_URE) == -1)
        goto oom;
      snprintf (detail, sizeof detail, "ber=%g: rewritten marginal",
                f->cfg.ber);
      log_event (f, now, "inject", FM_FAULT_URE, s * f->cfg.sector,
                 f->cfg.sector, detail);
    }
  }
  return 0;

oom:
  snprintf (err->msg, sizeof err->msg, "out of memory");
  errno = ENOMEM;
  return -1;
}

uint64_t
dfaults_flips (struct dfaults *f, uint64_t now, uint64_t offset, uint64_t count,
               uint64_t **bits)
{
  uint64_t k, j;

  *bits = NULL;
  if (f->cfg.flip_rate <= 0 || count == 0)
    return 0;
  f->reads++;
  k = fm_flip_count (f->cfg.seed, f->reads, count * 8, f->cfg.flip_rate);
  if (k == 0 || (*bits = malloc (k * sizeof **bits)) == NULL)
    return 0; /* no memory to corrupt with: the read is clean */
  for (j = 0; j < k; j++) {
    char detail[48];
    uint64_t b = fm_flip_bit (f->cfg.seed, f->reads, j, count * 8);

    (*bits)[j] = b;
    snprintf (detail, sizeof detail, "bit %u of the byte flipped",
              (unsigned)(b % 8));
    f->hits[FM_FAULT_FLIP]++;
    log_event (f, now, "trigger", FM_FAULT_FLIP, offset + b / 8, 1, detail);
  }
  return k;
}

bool
dfaults_fate (struct dfaults *f, uint64_t now, uint64_t offset, uint64_t count,
              uint64_t *actual)
{
  uint64_t h = fm_hash (f->cfg.seed, FM_STREAM_WRITE, ++f->writes, 0);
  double u = fm_unit (h);
  char detail[96];

  *actual = offset;
  if (now >= f->fail_at_ns)
    return true; /* a failed disk fails it (dfaults_write) */
  if (u < f->cfg.lost_write) {
    f->hits[FM_FAULT_LOST_WRITE]++;
    log_event (f, now, "trigger", FM_FAULT_LOST_WRITE, offset, count,
               "acknowledged, never written");
    return false;
  }
  if (u < f->cfg.lost_write + f->cfg.misdirected_write) {
    /* Up to 64 sectors either way, whole sectors, inside the disk. */
    uint64_t d =
        f->cfg.sector *
        (1 +
         fm_below (fm_hash (f->cfg.seed, FM_STREAM_WRITE, f->writes, 1), 64));
    bool down = (h & 1) && offset >= d;
    if (!down && offset + count + d > f->cfg.disk_size)
      down = offset >= d;
    if (!down && offset + count + d > f->cfg.disk_size)
      return true; /* nowhere else to land: written where meant */
    *actual = down ? offset - d : offset + d;
    f->hits[FM_FAULT_MISDIRECTED_WRITE]++;
    snprintf (detail, sizeof detail, "landed at byte %" PRIu64, *actual);
    log_event (f, now, "trigger", FM_FAULT_MISDIRECTED_WRITE, offset, count,
               detail);
  }
  return true;
}

int
dfaults_load (struct dfaults *f, const char *path, struct fm_err *err)
{
  FILE *fp = fopen (path, "r");
  char line[512], source[600];
  int lineno = 0;

  if (fp == NULL) {
    snprintf (err->msg, sizeof err->msg, "bad: %s: %s", path,
              fd_strerror (errno));
    return -1;
  }
  while (fgets (line, sizeof line, fp)) {
    char off_s[64], len_s[64], kind_s[64], extra[2], *hash;
    uint64_t off, len;
    enum fm_fault_kind kind;
    struct fm_err e;
    int n;

    lineno++;
    if (strchr (line, '\n') == NULL && !feof (fp)) {
      snprintf (err->msg, sizeof err->msg, "bad: %s:%d: line too long", path,
                lineno);
      goto fail;
    }
    if ((hash = strchr (line, '#')) != NULL)
      *hash = '\0';
    n = sscanf (line, "%63s %63s %63s %1s", off_s, len_s, kind_s, extra);
    if (n <= 0)
      continue;
    if (n != 3) {
      snprintf (err->msg, sizeof err->msg,
                "bad: %s:%d: expected 'OFFSET LENGTH KIND'", path, lineno);
      goto fail;
    }
    if (fm_parse_size ("offset", off_s, &off, &e) == -1 ||
        fm_parse_size ("length", len_s, &len, &e) == -1 ||
        fm_fault_parse (kind_s, &kind, &e) == -1) {
      snprintf (err->msg, sizeof err->msg, "bad: %s:%d: %s", path, lineno,
                e.msg);
      goto fail;
    }
    snprintf (source, sizeof source, "bad=%s:%d", path, lineno);
    if (dfaults_inject (f, 0, kind, off, len, source, &e) == -1) {
      snprintf (err->msg, sizeof err->msg, "bad: %s:%d: %s", path, lineno,
                e.msg);
      goto fail;
    }
  }
  fclose (fp);
  return 0;

fail:
  fclose (fp);
  return -1;
}

void
dfaults_record (struct dfaults *f, uint64_t now, enum fm_fault_kind kind,
                uint64_t offset, uint64_t length, const char *detail)
{
  f->hits[kind]++;
  log_event (f, now, "trigger", kind, offset, length, detail);
}

void
dfaults_json (const struct dfaults *f, FILE *fp)
{
  int k;

  fputc ('{', fp);
  for (k = 0; k < FM_FAULT_NKINDS; k++)
    fprintf (fp, "%s\"%s\": %" PRIu64, k ? ", " : "",
             fm_fault_name ((enum fm_fault_kind)k), f->hits[k]);
  fprintf (fp, ", \"faulty_sectors\": %" PRIu64 "}",
           fm_faultmap_sectors (f->map));
}
