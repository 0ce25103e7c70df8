/* futuredisk — nbdplugin: the emulated disk's faults (see faults.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "faults.h"
#include "faultmodels/counts.h"
#include "faultmodels/units.h"
#include "faultmodels/rng.h"
#include "json.h"

struct dfaults {
  struct dfaults_config cfg;    /* as given (log_path is not kept) */
  struct fm_faultmap *map;      /* unreadable sectors (ure, lse) */
  struct fm_faultmap *remapped; /* sectors living on spares */
  struct fm_faultmap *weak;     /* marginal sectors injected */
  FILE *log;
  uint64_t sectors;
  double p_sector;   /* chance a sector is unreadable, from ber */
  double p_marginal; /* chance a sector is marginal, from marginal */
  /* Per sector: every draw made per read or per write is keyed by the
   * sector and one of these counts of its own, so the order in which the
   * kernel reads and writes other sectors moves none of them.  Reads of
   * it (flips; NULL without them); reads of it while it was unreadable
   * (whether it comes back); reads from the media of it while marginal
   * (their retries); writes of it (re-roll, reallocation, lost and
   * misdirected writes; a write lost or misdirected counts where it was
   * aimed, too; NULL without such draws).
   */
  struct fm_counts *read_count;
  struct fm_counts *bad_reads;
  struct fm_counts *weak_reads;
  struct fm_counts *write_count;
  uint64_t retries;    /* retries that brought reads back */
  uint64_t spares;     /* spare sectors left */
  uint64_t fail_at_ns; /* UINT64_MAX: never (inject moves it) */
  bool failure_logged;
  bool corrupting;       /* the disk drew silent corruption (corrupt=) */
  bool lse_prone;        /* the disk drew latent sector errors (age=, lse=) */
  uint64_t lse_latent;   /* LSE sectors at start */
  uint64_t lse_episodes; /* episodes so far */
  uint64_t spread;       /* mean sectors between a burst's members */
  double lse_per_s;      /* new episodes per virtual second */
  double rot_per_s;      /* rot flips per virtual second, whole disk */
  uint64_t advanced_ns;  /* timed events up to here are applied */
  uint64_t *stuck;       /* sorted: bit index * 2 + stuck value */
  size_t nstuck;
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
  snprintf (detail, sizeof detail, "ber=%g: marginal sector", f->cfg.set.ber);
  log_event (f, 0, "inject", FM_FAULT_URE, sector * f->cfg.sector,
             f->cfg.sector, detail);
}

/* Does this disk corrupt silently at all?  corrupt= is the share of
 * disks that do (0.5% of nearline, 0.05% of enterprise disks over 41
 * months: Bairavasundaram et al., "An Analysis of Data Corruption in the
 * Storage Stack", FAST 2008); the others never flip, rot, stick, lose or
 * misdirect.
 */
static void
corruption (struct dfaults *f)
{
  struct fm_faultset *s = &f->cfg.set;

  f->corrupting =
      fm_unit (fm_hash (f->cfg.seed, FM_STREAM_CORRUPT, 0, 0)) < s->corrupt;
  if (!f->corrupting) {
    s->flip_rate = s->rot_rate = s->stuck_bits = 0;
    s->lost_write = s->misdirected_write = 0;
  }
  f->rot_per_s = s->rot_rate * (double)f->sectors / 3600;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

  return x < y ? -1 : x > y;
}

/* Episode `key` of latent sector errors, at most `limit` sectors: into
 * out[], logged with `when` in the detail.  Returns the sectors placed.
 */
static uint64_t
episode (struct dfaults *f, uint64_t now, uint64_t key, uint64_t limit,
         const char *when, uint64_t *out)
{
  uint64_t seed = f->cfg.seed, j;
  uint64_t k = fm_lse_burst (seed, key, f->cfg.set.lse_burst);
  uint64_t centre = fm_lse_centre (seed, key, f->sectors, f->cfg.set.lse_head);

  if (k > limit)
    k = limit;
  for (j = 0; j < k; j++) {
    uint64_t s = fm_lse_member (seed, key, j, centre, f->spread, f->sectors);
    char detail[160];

    out[j] = s;
    snprintf (detail, sizeof detail,
              "episode %" PRIu64 " (%" PRIu64 " sectors around sector %" PRIu64
              "), %s",
              f->lse_episodes, k, centre, when);
    log_event (f, now, "inject", FM_FAULT_LSE, s * f->cfg.sector, f->cfg.sector,
               detail);
  }
  f->lse_episodes++;
  return k;
}

/* The latent sector errors the disk built up over its age (the field
 * model of faultmodels/faults.h): is it prone, how many errors (Pareto),
 * in which episodes, where.  Sorted before they go into the map, so
 * placing many is cheap.
 */
static int
latent_errors (struct dfaults *f, struct fm_err *err)
{
  const struct fm_faultset *s = &f->cfg.set;
  double age_s = (double)s->age_ns / 1e9;
  uint64_t n, placed = 0, i, *v, before;

  f->spread = s->lse_spread ? s->lse_spread / f->cfg.sector
                            : f->cfg.track_bytes / f->cfg.sector;
  f->lse_prone = fm_unit (fm_hash (f->cfg.seed, FM_STREAM_LSE_EPISODE,
                                   UINT64_MAX, 0)) < fm_faultset_lse_prone (s);
  if (!f->lse_prone || f->sectors == 0)
    return 0;
  n = fm_lse_count (f->cfg.seed, s->lse_alpha, s->lse_min, s->lse_max);
  if (n > f->sectors)
    n = f->sectors;
  if ((v = malloc (n * sizeof *v)) == NULL) {
    return fm_fail (err, "out of memory for %" PRIu64 " LSEs", n);
  }
  while (placed < n) {
    uint64_t key = f->lse_episodes;
    double ago =
        age_s * fm_unit (fm_hash (f->cfg.seed, FM_STREAM_LSE_EPISODE, key, 0));
    char when[64];

    snprintf (when, sizeof when, "onset %.4g h before start", ago / 3600);
    placed += episode (f, 0, key, n - placed, when, v + placed);
  }
  qsort (v, n, sizeof *v, cmp_u64);
  before = fm_faultmap_sectors (f->map);
  for (i = 0; i < n; i++)
    if (fm_faultmap_add (f->map, v[i], 1, FM_FAULT_LSE) == -1) {
      free (v);
      return fm_fail (err, "out of memory placing LSEs");
    }
  free (v);
  /* Sectors drawn twice, or already marginal, count once. */
  f->lse_latent = fm_faultmap_sectors (f->map) - before;
  /* Onsets go on during the run: at lse-rate, or at the rate that built
   * these errors up over the disk's age.
   */
  if (s->lse_rate >= 0)
    f->lse_per_s = s->lse_rate / 3600;
  else if (age_s > 0)
    f->lse_per_s = (double)f->lse_episodes / age_s;
  return 0;
}

/* Stuck bits: a Poisson number over every bit of the disk, each stuck at
 * 0 or 1 for good.  Kept sorted for the read path's binary search.
 */
static int
stuck_bits (struct dfaults *f, struct fm_err *err)
{
  double bits = (double)f->cfg.disk_size * 8;
  uint64_t seed = f->cfg.seed, n, i, k = 0;

  if (f->cfg.set.stuck_bits <= 0)
    return 0;
  n = fm_poisson (fm_hash (seed, FM_STREAM_STUCK, UINT64_MAX, 0),
                  fm_hash (seed, FM_STREAM_STUCK, UINT64_MAX, 1),
                  bits * f->cfg.set.stuck_bits);
  if (n > 10000000) {
    return fm_fail (err,
                    "stuck-bits: %" PRIu64
                    " stuck bits on this disk is more than "
                    "the 10^7 futuredisk keeps",
                    n);
  }
  if (n == 0)
    return 0;
  if ((f->stuck = malloc (n * sizeof *f->stuck)) == NULL) {
    return fm_fail (err, "out of memory for stuck bits");
  }
  for (i = 0; i < n; i++) {
    uint64_t bit =
        fm_below (fm_hash (seed, FM_STREAM_STUCK, i, 0), f->cfg.disk_size * 8);
    f->stuck[i] = bit * 2 + (fm_hash (seed, FM_STREAM_STUCK, i, 1) & 1);
  }
  qsort (f->stuck, n, sizeof *f->stuck, cmp_u64);
  for (i = 0; i < n; i++) {
    char detail[48];

    if (k > 0 && f->stuck[k - 1] / 2 == f->stuck[i] / 2)
      continue; /* the same bit drawn twice: the first value holds */
    f->stuck[k++] = f->stuck[i];
    snprintf (detail, sizeof detail, "bit %u of the byte stuck at %u",
              (unsigned)(f->stuck[i] / 2 % 8), (unsigned)(f->stuck[i] & 1));
    log_event (f, 0, "inject", FM_FAULT_STUCK, f->stuck[i] / 16, 1, detail);
  }
  f->nstuck = k;
  return 0;
}

/* Does the disk draw anything per write: the re-roll of a rewritten
 * sector, reallocation, lost and misdirected writes?
 */
static bool
draws_per_write (const struct dfaults *f)
{
  const struct fm_faultset *s = &f->cfg.set;

  return f->p_sector > 0 || s->realloc > 0 || s->lost_write > 0 ||
         s->misdirected_write > 0;
}

/* The counts the disk's draws need.  Every read and every write is
 * counted only for flips and for the draws per write: a disk without
 * them keeps nothing for the sectors it merely reads or writes.  The
 * reads of unreadable and marginal sectors are few, and always counted.
 */
static int
start_counts (struct dfaults *f, struct fm_err *err)
{
  if ((f->bad_reads = fm_counts_new ()) == NULL ||
      (f->weak_reads = fm_counts_new ()) == NULL ||
      (f->cfg.set.flip_rate > 0 &&
       (f->read_count = fm_counts_new ()) == NULL) ||
      (draws_per_write (f) && (f->write_count = fm_counts_new ()) == NULL))
    return fm_fail (err, "out of memory");
  return 0;
}

/* How many times sector s has been written (0 if not counted). */
static uint64_t
writes_of (const struct dfaults *f, uint64_t s)
{
  return f->write_count ? fm_counts_get (f->write_count, s, NULL) : 0;
}

struct dfaults *
dfaults_new (const struct dfaults_config *cfg, struct fm_err *err)
{
  struct dfaults *f = calloc (1, sizeof *f);

  if (f == NULL || (f->map = fm_faultmap_new ()) == NULL) {
    free (f);
    fm_fail (err, "out of memory");
    return NULL;
  }
  f->cfg = *cfg;
  f->cfg.log_path = NULL;
  f->sectors = cfg->disk_size / cfg->sector;
  f->p_sector = cfg->set.ber > 0
                    ? fm_ure_sector_probability (cfg->set.ber, cfg->sector)
                    : 0;
  f->fail_at_ns = cfg->set.fail_at_ns ? cfg->set.fail_at_ns : UINT64_MAX;
  f->spares = cfg->set.spares;
  f->p_marginal =
      fm_marginal_sector_probability (cfg->set.marginal, cfg->sector);
  if ((f->remapped = fm_faultmap_new ()) == NULL ||
      (f->weak = fm_faultmap_new ()) == NULL) {
    fm_fail (err, "out of memory");
    dfaults_free (f);
    return NULL;
  }
  if (cfg->log_path && (f->log = fopen (cfg->log_path, "w")) == NULL) {
    fm_fail (err, "faultlog: %s: %s", cfg->log_path, fd_strerror (errno));
    dfaults_free (f);
    return NULL;
  }
  if (f->p_sector > 0) {
    uint64_t n =
        fm_ure_marginal (f->cfg.seed, f->sectors, f->p_sector, add_marginal, f);
    if (n > 0 && fm_faultmap_sectors (f->map) == 0) {
      fm_fail (err, "out of memory placing %llu marginal sectors",
               (unsigned long long)n);
      dfaults_free (f);
      return NULL;
    }
  }
  corruption (f);
  if (latent_errors (f, err) == -1 || stuck_bits (f, err) == -1 ||
      start_counts (f, err) == -1) {
    dfaults_free (f);
    return NULL;
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
    fm_faultmap_free (f->weak);
    fm_counts_free (f->read_count);
    fm_counts_free (f->bad_reads);
    fm_counts_free (f->weak_reads);
    fm_counts_free (f->write_count);
    free (f->stuck);
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
    return fm_fail (err,
                    "inject %s: %" PRIu64 "+%" PRIu64 " is outside the %" PRIu64
                    "-byte disk",
                    fm_fault_name (kind), offset, length, f->cfg.disk_size);
  }
  switch (kind) {
    case FM_FAULT_URE:
    case FM_FAULT_LSE:
      if (length == 0) {
        return fm_fail (err, "inject %s: length is 0", fm_fault_name (kind));
      }
      if (fm_faultmap_add (f->map, first, last - first, kind) == -1) {
        return fm_fail (err, "inject: out of memory");
      }
      /* The log says which whole sectors went bad. */
      offset = first * f->cfg.sector;
      length = (last - first) * f->cfg.sector;
      break;
    case FM_FAULT_MARGINAL:
      if (length == 0) {
        return fm_fail (err, "inject %s: length is 0", fm_fault_name (kind));
      }
      /* Weak media: a rewrite does not mend it, so a map of its own. */
      if (fm_faultmap_add (f->weak, first, last - first, kind) == -1) {
        return fm_fail (err, "inject: out of memory");
      }
      offset = first * f->cfg.sector;
      length = (last - first) * f->cfg.sector;
      break;
    case FM_FAULT_DISK_FAILURE:
      if (now < f->fail_at_ns)
        f->fail_at_ns = now;
      break;
    case FM_FAULT_ROT:
      /* The emulator flipped the bit (emu_inject); this logs it. */
      f->hits[FM_FAULT_ROT]++;
      break;
    /* These happen to a write or a power cut as it comes, and the fault
     * log is the ground truth: nothing is logged that did not happen.
     */
    case FM_FAULT_POWERCUT:
    case FM_FAULT_TORN_WRITE:
    case FM_FAULT_LOST_WRITE:
    case FM_FAULT_MISDIRECTED_WRITE:
    case FM_FAULT_FLIP:
    case FM_FAULT_REALLOCATED:
    case FM_FAULT_STUCK:
      return fm_fail (err,
                      "inject %s: not a fault of whole sectors; it comes from "
                      "rates (powercut, powercut-after=, lost-write=, "
                      "misdirected-write=, flip-rate=, stuck-bits=, realloc=)",
                      fm_fault_name (kind));
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
  fm_fail (err, "the disk has failed (disk-failure)");
  errno = EIO;
  return -1;
}

/* The drive retries sector s of a read until it reads: fm_retries
 * retries of retry_ns each, drawn from (stream, s, attempt).  If they fit
 * in what is left of the command's error recovery limit, they are added
 * to *extra_ns and their number returned; else 0: the drive gives up.
 */
static uint64_t
retry (struct dfaults *f, uint64_t stream, uint64_t s, uint64_t attempt,
       uint64_t *extra_ns)
{
  uint64_t k =
      fm_retries (f->cfg.seed, stream, s, attempt, f->cfg.set.retry_revs);
  uint64_t left = f->cfg.set.erc_ns - *extra_ns;

  if (f->cfg.retry_ns > 0 && k > left / f->cfg.retry_ns)
    return 0;
  *extra_ns += k * f->cfg.retry_ns;
  f->retries += k;
  return k;
}

/* The drive gave up on sector s after its whole recovery limit. */
static int
give_up (struct dfaults *f, uint64_t now, enum fm_fault_kind kind, uint64_t s,
         uint64_t n, const char *why, uint64_t *extra_ns, struct fm_err *err)
{
  char detail[128];

  *extra_ns = f->cfg.set.erc_ns;
  f->hits[kind]++;
  snprintf (detail, sizeof detail, "read failed after erc_ns=%" PRIu64 "%s",
            f->cfg.set.erc_ns, why);
  log_event (f, now, "trigger", kind, s * f->cfg.sector, n * f->cfg.sector,
             detail);
  fm_fail (err,
           "unrecoverable read error at sector %" PRIu64 " (byte %" PRIu64
           ", %s)",
           s, s * f->cfg.sector, fm_fault_name (kind));
  errno = EIO;
  return -1;
}

/* Unreadable sectors (ure, lse) in [first, first+n): each fails the read,
 * unless with chance ure-recover a retry reads it after all; then the data
 * comes back and the drive rewrites the sector, which reads from now on.
 * Each is read once more first, all of them, though the first that fails
 * ends the read: what a sector draws is its own nth read while unreadable,
 * not the nth time a read got that far.
 */
static int
bad_sectors (struct dfaults *f, uint64_t now, uint64_t first, uint64_t n,
             uint64_t *extra_ns, struct fm_err *err)
{
  uint64_t bad, bad_n, k, nth, s = first;
  enum fm_fault_kind kind;
  char detail[96];

  while (s < first + n &&
         fm_faultmap_find (f->map, s, first + n - s, &bad, &bad_n, &kind)) {
    if (fm_counts_bump (f->bad_reads, bad, bad_n) == -1)
      goto oom;
    s = bad + bad_n;
  }
  while (fm_faultmap_find (f->map, first, n, &bad, &bad_n, &kind)) {
    nth = fm_counts_get (f->bad_reads, bad, NULL);
    if (f->cfg.set.ure_recover <= 0 ||
        fm_unit (fm_hash (f->cfg.seed, FM_STREAM_URE_RETRY, bad, nth)) >=
            f->cfg.set.ure_recover)
      return give_up (f, now, kind, bad, bad_n, "", extra_ns, err);
    k = retry (f, FM_STREAM_URE_RETRY, bad, nth, extra_ns);
    if (k == 0)
      return give_up (f, now, kind, bad, 1, " (its retries would take longer)",
                      extra_ns, err);
    snprintf (detail, sizeof detail,
              "recovered after %" PRIu64 " retries (%" PRIu64 " ns)", k,
              k * f->cfg.retry_ns);
    log_event (f, now, "recover", kind, bad * f->cfg.sector, f->cfg.sector,
               detail);
    if (fm_faultmap_clear (f->map, bad, 1) == -1)
      goto oom;
  }
  return 0;

oom:
  fm_fail (err, "out of memory");
  errno = ENOMEM;
  return -1;
}

static bool
is_marginal (const struct dfaults *f, uint64_t s)
{
  uint64_t bad, bad_n;
  enum fm_fault_kind kind;

  return (f->p_marginal > 0 && fm_marginal (f->cfg.seed, s, f->p_marginal)) ||
         fm_faultmap_find (f->weak, s, 1, &bad, &bad_n, &kind);
}

/* Marginal sectors in [first, first+n), read from the media: each read
 * of one costs retries, logged with their number; past the recovery
 * limit the read fails.  Every one of them counts the read, even after
 * the read failed (`failed`: at an unreadable sector, or at a marginal
 * one before it), so that each draws for its own nth read from the
 * media.
 */
static int
slow_sectors (struct dfaults *f, uint64_t now, uint64_t first, uint64_t n,
              bool failed, uint64_t *extra_ns, struct fm_err *err)
{
  uint64_t s, k;
  char detail[96];

  if (f->p_marginal <= 0 && fm_faultmap_sectors (f->weak) == 0)
    return failed ? -1 : 0;
  for (s = first; s < first + n; s++) {
    if (!is_marginal (f, s))
      continue;
    if (fm_counts_bump (f->weak_reads, s, 1) == -1) {
      fm_fail (err, "out of memory");
      errno = ENOMEM;
      return -1;
    }
    if (failed)
      continue;
    k = retry (f, FM_STREAM_MARGINAL, s, fm_counts_get (f->weak_reads, s, NULL),
               extra_ns);
    if (k == 0) {
      give_up (f, now, FM_FAULT_MARGINAL, s, 1,
               " (a marginal sector needing more retries)", extra_ns, err);
      failed = true;
      continue;
    }
    f->hits[FM_FAULT_MARGINAL]++;
    snprintf (detail, sizeof detail,
              "read after %" PRIu64 " retries (%" PRIu64 " ns)", k,
              k * f->cfg.retry_ns);
    log_event (f, now, "trigger", FM_FAULT_MARGINAL, s * f->cfg.sector,
               f->cfg.sector, detail);
  }
  if (failed)
    errno = EIO;
  return failed ? -1 : 0;
}

int
dfaults_read (struct dfaults *f, uint64_t now, uint64_t offset, uint64_t count,
              bool media, uint64_t *extra_ns, struct fm_err *err)
{
  uint64_t first = offset / f->cfg.sector;
  uint64_t n = (offset + count + f->cfg.sector - 1) / f->cfg.sector - first;
  int ret;

  *extra_ns = 0;
  if (failed_disk (f, now, err) == -1)
    return -1;
  if (count == 0)
    return 0;
  if (f->read_count && fm_counts_bump (f->read_count, first, n) == -1) {
    fm_fail (err, "out of memory");
    errno = ENOMEM;
    return -1;
  }
  ret = bad_sectors (f, now, first, n, extra_ns, err);
  /* A read that failed there still counts for its marginal sectors. */
  if (media && (ret == 0 || errno != ENOMEM))
    ret = slow_sectors (f, now, first, n, ret == -1, extra_ns, err);
  return ret;
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

      if (fm_unit (fm_hash (f->cfg.seed, FM_STREAM_REALLOC, s,
                            writes_of (f, s))) >= f->cfg.set.realloc)
        continue; /* rewritten in place */
      if (f->spares == 0) {
        log_event (f, now, "trigger", FM_FAULT_REALLOCATED, s * f->cfg.sector,
                   f->cfg.sector, "no spare sector left: write failed");
        fm_fail (err,
                 "write failed: sector %" PRIu64 " needs a spare and none "
                 "is left",
                 s);
        errno = EIO;
        return -1;
      }
      f->spares--;
      if (fm_faultmap_add (f->remapped, s, 1, FM_FAULT_REALLOCATED) == -1) {
        fm_fail (err, "out of memory");
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
  uint64_t last = (offset + count + f->cfg.sector - 1) / f->cfg.sector, s, end;

  if (failed_disk (f, now, err) == -1)
    return -1;
  if (count == 0)
    return 0;
  if (f->write_count &&
      fm_counts_bump (f->write_count, first, last - first) == -1)
    goto oom;
  /* A rewritten sector reads again (the drive rewrote it in place).  A
   * partial write of a bad sector counts as rewriting it: the drive
   * merges the new bytes into the sector it writes.
   */
  if (f->cfg.set.realloc > 0 && reallocate (f, now, first, last, err) == -1)
    return -1;
  if (fm_faultmap_clear (f->map, first, last - first) == -1)
    goto oom;
  /* ... but a written sector may come out marginal again: drawn for
   * its own count of writes, run by run of sectors written as often.
   */
  for (s = first; f->p_sector > 0 && s < last; s = end) {
    uint64_t w = fm_counts_get (f->write_count, s, &end), t;

    for (end = end < last ? end : last, t = s; t < end; t++) {
      char detail[64];

      if (!fm_ure_reroll (f->cfg.seed, t, w, f->p_sector))
        continue;
      if (fm_faultmap_add (f->map, t, 1, FM_FAULT_URE) == -1)
        goto oom;
      snprintf (detail, sizeof detail, "ber=%g: rewritten marginal",
                f->cfg.set.ber);
      log_event (f, now, "inject", FM_FAULT_URE, t * f->cfg.sector,
                 f->cfg.sector, detail);
    }
  }
  return 0;

oom:
  fm_fail (err, "out of memory");
  errno = ENOMEM;
  return -1;
}

/* The flips of one read, as fm_flips finds them: bit indexes into the
 * read's buffer.
 */
struct flip_list {
  uint64_t sector, offset, count;
  uint64_t *bits, n, alloc;
  bool oom;
};

static void
add_flip (void *opaque, uint64_t sector, uint64_t bit)
{
  struct flip_list *l = opaque;
  uint64_t byte = sector * l->sector + bit / 8;

  /* A sector read in part flips only where it was read. */
  if (l->oom || byte < l->offset || byte - l->offset >= l->count)
    return;
  if (l->n == l->alloc) {
    uint64_t na = l->alloc ? 2 * l->alloc : 8, *nb;

    if ((nb = realloc (l->bits, na * sizeof *nb)) == NULL) {
      l->oom = true;
      return;
    }
    l->bits = nb;
    l->alloc = na;
  }
  l->bits[l->n++] = (byte - l->offset) * 8 + bit % 8;
}

uint64_t
dfaults_flips (struct dfaults *f, uint64_t now, uint64_t offset, uint64_t count,
               uint64_t **bits)
{
  struct flip_list l = {
      .sector = f->cfg.sector, .offset = offset, .count = count};
  uint64_t s = offset / f->cfg.sector, end, j;
  uint64_t last = (offset + count + f->cfg.sector - 1) / f->cfg.sector;

  *bits = NULL;
  if (f->cfg.set.flip_rate <= 0 || count == 0)
    return 0;
  /* Run by run of sectors read as often (dfaults_read counted this
   * read), each sector's flips for its own count.
   */
  for (; s < last; s = end) {
    uint64_t nth = fm_counts_get (f->read_count, s, &end);

    if (end > last)
      end = last;
    fm_flips (f->cfg.seed, f->cfg.set.flip_rate, f->cfg.sector, s, end - s, nth,
              add_flip, &l);
  }
  if (l.oom) {
    free (l.bits);
    return 0; /* no memory to corrupt with: the read is clean */
  }
  for (j = 0; j < l.n; j++) {
    char detail[48];

    snprintf (detail, sizeof detail, "bit %u of the byte flipped",
              (unsigned)(l.bits[j] % 8));
    f->hits[FM_FAULT_FLIP]++;
    log_event (f, now, "trigger", FM_FAULT_FLIP, offset + l.bits[j] / 8, 1,
               detail);
  }
  *bits = l.bits;
  return l.n;
}

void
dfaults_advance (struct dfaults *f, uint64_t now, dfaults_rot_fn *rot,
                 void *opaque)
{
  uint64_t seed = f->cfg.seed, w;

  if ((f->lse_per_s <= 0 && f->rot_per_s <= 0) || now <= f->advanced_ns)
    return;
  /* Window by window (one virtual second each), events after the last
   * call up to now.  Within a window they apply in draw order, which is
   * not time order; nothing reads the disk in between, so it is the same.
   */
  for (w = f->advanced_ns / 1000000000; w <= now / 1000000000; w++) {
    uint64_t n, j;

    n = fm_window_count (seed, FM_STREAM_LSE_EPISODE, w, f->lse_per_s);
    for (j = 0; j < n && j < (1u << 20); j++) {
      uint64_t t = w * 1000000000 +
                   fm_window_event_ns (seed, FM_STREAM_LSE_EPISODE, w, j);
      uint64_t v[64], k, i;

      if (t <= f->advanced_ns || t > now)
        continue;
      k = episode (f, t, (1ULL << 63) | (w << 20) | j, 64, "onset now", v);
      for (i = 0; i < k; i++)
        fm_faultmap_add (f->map, v[i], 1, FM_FAULT_LSE);
    }
    n = fm_window_count (seed, FM_STREAM_ROT, w, f->rot_per_s);
    for (j = 0; j < n; j++) {
      uint64_t t =
          w * 1000000000 + fm_window_event_ns (seed, FM_STREAM_ROT, w, j);
      uint64_t h = fm_window_event_hash (seed, FM_STREAM_ROT, w, j);
      uint64_t bit = fm_below (h, f->sectors * f->cfg.sector * 8);
      char detail[48];

      if (t <= f->advanced_ns || t > now)
        continue;
      rot (opaque, bit / 8, (unsigned)(bit % 8));
      f->hits[FM_FAULT_ROT]++;
      snprintf (detail, sizeof detail, "bit %u of the byte flipped at rest",
                (unsigned)(bit % 8));
      log_event (f, t, "inject", FM_FAULT_ROT, bit / 8, 1, detail);
    }
  }
  f->advanced_ns = now;
}

bool
dfaults_has_stuck (const struct dfaults *f)
{
  return f->nstuck > 0;
}

uint64_t
dfaults_stuck (struct dfaults *f, uint64_t now, void *buf, uint64_t offset,
               uint64_t count)
{
  uint64_t lo = offset * 16, hi = (offset + count) * 16, changed = 0;
  size_t a = 0, b = f->nstuck;
  unsigned char *p = buf;

  while (a < b) { /* the first stuck bit at or after offset */
    size_t m = a + (b - a) / 2;
    if (f->stuck[m] < lo)
      a = m + 1;
    else
      b = m;
  }
  for (; a < f->nstuck && f->stuck[a] < hi; a++) {
    uint64_t bit = f->stuck[a] / 2, at = bit / 8 - offset;
    unsigned mask = 1u << (bit % 8), want = f->stuck[a] & 1 ? mask : 0;
    char detail[64];

    if ((p[at] & mask) == want)
      continue;
    p[at] = (unsigned char)((p[at] & ~mask) | want);
    changed++;
    f->hits[FM_FAULT_STUCK]++;
    snprintf (detail, sizeof detail, "bit %u of the byte read as its stuck %u",
              (unsigned)(bit % 8), (unsigned)(f->stuck[a] & 1));
    log_event (f, now, "trigger", FM_FAULT_STUCK, bit / 8, 1, detail);
  }
  return changed;
}

bool
dfaults_fate (struct dfaults *f, uint64_t now, uint64_t offset, uint64_t count,
              uint64_t *actual)
{
  const struct fm_faultset *set = &f->cfg.set;
  uint64_t first = offset / f->cfg.sector;
  uint64_t last = (offset + count + f->cfg.sector - 1) / f->cfg.sector;
  uint64_t w, h;
  double u;
  char detail[96];

  *actual = offset;
  if (now >= f->fail_at_ns || count == 0)
    return true; /* a failed disk fails it (dfaults_write) */
  if (set->lost_write <= 0 && set->misdirected_write <= 0)
    return true;
  /* Keyed by where the write begins and how often that sector has been
   * written: the order of writes elsewhere changes nothing.
   */
  w = writes_of (f, first);
  h = fm_hash (f->cfg.seed, FM_STREAM_WRITE, first, w);
  u = fm_unit (h);
  if (u >= set->lost_write + set->misdirected_write)
    return true;
  if (u >= set->lost_write) {
    /* Up to 64 sectors either way, whole sectors, inside the disk. */
    uint64_t d =
        f->cfg.sector * (1 + fm_below (fm_hash (f->cfg.seed, FM_STREAM_WRITE,
                                                first, w | (1ULL << 63)),
                                       64));
    bool down = (h & 1) && offset >= d;
    if (!down && offset + count + d > f->cfg.disk_size)
      down = offset >= d;
    if (!down && offset + count + d > f->cfg.disk_size)
      return true; /* nowhere else to land: written where meant */
    *actual = down ? offset - d : offset + d;
  }
  /* The target counts the write it missed, so that the next write there
   * draws afresh.  No memory to count it: no fault either.
   */
  if (fm_counts_bump (f->write_count, first, last - first) == -1) {
    *actual = offset;
    return true;
  }
  if (*actual == offset) {
    f->hits[FM_FAULT_LOST_WRITE]++;
    log_event (f, now, "trigger", FM_FAULT_LOST_WRITE, offset, count,
               "acknowledged, never written");
    return false;
  }
  f->hits[FM_FAULT_MISDIRECTED_WRITE]++;
  snprintf (detail, sizeof detail, "landed at byte %" PRIu64, *actual);
  log_event (f, now, "trigger", FM_FAULT_MISDIRECTED_WRITE, offset, count,
             detail);
  return true;
}

int
dfaults_load (struct dfaults *f, const char *path, struct fm_err *err)
{
  FILE *fp = fopen (path, "r");
  char line[512], source[600];
  int lineno = 0;

  if (fp == NULL) {
    return fm_fail (err, "bad: %s: %s", path, fd_strerror (errno));
  }
  while (fgets (line, sizeof line, fp)) {
    char off_s[64], len_s[64], kind_s[64], extra[2], *hash;
    uint64_t off, len;
    enum fm_fault_kind kind;
    struct fm_err e;
    int n;

    lineno++;
    if (strchr (line, '\n') == NULL && !feof (fp)) {
      fm_fail (err, "bad: %s:%d: line too long", path, lineno);
      goto fail;
    }
    if ((hash = strchr (line, '#')) != NULL)
      *hash = '\0';
    n = sscanf (line, "%63s %63s %63s %1s", off_s, len_s, kind_s, extra);
    if (n <= 0)
      continue;
    if (n != 3) {
      fm_fail (err, "bad: %s:%d: expected 'OFFSET LENGTH KIND'", path, lineno);
      goto fail;
    }
    if (fm_parse_size ("offset", off_s, &off, &e) == -1 ||
        fm_parse_size ("length", len_s, &len, &e) == -1 ||
        fm_fault_parse (kind_s, &kind, &e) == -1) {
      fm_fail (err, "bad: %s:%d: %s", path, lineno, e.msg);
      goto fail;
    }
    snprintf (source, sizeof source, "bad=%s:%d", path, lineno);
    if (dfaults_inject (f, 0, kind, off, len, source, &e) == -1) {
      fm_fail (err, "bad: %s:%d: %s", path, lineno, e.msg);
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
  fprintf (fp,
           ", \"retries\": %" PRIu64 ", \"faulty_sectors\": %" PRIu64
           ", \"lse_prone\": %s, "
           "\"lse_latent\": %" PRIu64 ", \"lse_episodes\": %" PRIu64
           ", \"silent_corruption\": %s, \"stuck_bits\": %zu, "
           "\"spares_left\": %" PRIu64 "}",
           f->retries, fm_faultmap_sectors (f->map),
           f->lse_prone ? "true" : "false", f->lse_latent, f->lse_episodes,
           f->corrupting ? "true" : "false", f->nstuck, f->spares);
}
