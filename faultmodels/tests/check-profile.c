/* futuredisk — faultmodels: profiles, profile files, sizes. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "faultmodels/faultset.h"
#include "faultmodels/profile.h"
#include "faultmodels/units.h"

static int
parse (const char *text, struct fm_profile *p, struct fm_err *err)
{
  return fm_profile_parse ("t.profile", text, strlen (text), p, err);
}

START_TEST (test_builtins)
{
  struct fm_profile p, q;
  struct fm_err err;
  size_t i, j;

  for (i = 0; fm_profile_builtin_name (i); i++) {
    const char *name = fm_profile_builtin_name (i);

    ck_assert_msg (fm_profile_builtin (name, &p, &err) == 0, "%s", err.msg);
    ck_assert_str_eq (p.name, name);
    ck_assert_msg (fm_profile_validate (&p, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq (p.capacity, p.design_capacity);
    /* Every built-in says what is sourced and what is ours. */
    ck_assert_uint_gt (strlen (p.sourced), 0);
    ck_assert_uint_gt (strlen (p.estimated), 0);
    ck_assert_uint_gt (strlen (p.description), 0);
    for (j = 0; j < i; j++)
      ck_assert_str_ne (fm_profile_builtin_name (j), name);
  }
  ck_assert_uint_ge (i, 9);

  /* The workshop's numbers, exactly. */
  ck_assert_int_eq (fm_profile_builtin ("roadmap-2006", &p, &err), 0);
  ck_assert_uint_eq (p.capacity, 500000000000ULL);
  ck_assert_uint_eq (p.bandwidth, 125000000);
  ck_assert_uint_eq (p.seek_avg_ns, 8000000);
  ck_assert_int_eq (fm_profile_builtin ("roadmap-2013", &q, &err), 0);
  ck_assert_uint_eq (q.capacity, 8000000000000ULL);
  ck_assert_uint_eq (q.bandwidth, 625000000);
  ck_assert_uint_eq (q.seek_avg_ns, 6500000);
  ck_assert_uint_eq (q.rpm, 7200);
  ck_assert_double_eq (q.zone_ratio, 2.0);

  ck_assert_int_eq (fm_profile_builtin ("roadmap-2042", &p, &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "unknown profile 'roadmap-2042'"));
  ck_assert_ptr_nonnull (strstr (err.msg, "roadmap-2006, roadmap-2009"));
}
END_TEST

/* The value a derived built-in's keys give `key`, into val; false if
 * they leave it to the base.
 */
static bool
override (const char *keys, const char *key, char *val, size_t size)
{
  size_t n = strlen (key);
  const char *line, *v;

  for (line = keys; *line; line = strchr (line, '\n') + 1) {
    ck_assert_ptr_nonnull (strchr (line, '\n'));
    if (strncmp (line, key, n) == 0 && strncmp (line + n, " = ", 3) == 0) {
      v = line + n + 3;
      snprintf (val, size, "%.*s", (int)(strchr (v, '\n') - v), v);
      return true;
    }
  }
  return false;
}

/* Following i's bases ends at a disk given whole (before resolving one:
 * a cycle would recurse for ever).
 */
static bool
chain_ends (size_t i)
{
  const char *keys, *base = fm_profile_builtin_base (i, &keys), *n;
  size_t steps, j;

  for (steps = 0; base; steps++) {
    for (j = 0; (n = fm_profile_builtin_name (j)) && strcmp (n, base); j++)
      ;
    if (n == NULL || steps > 64)
      return false;
    base = fm_profile_builtin_base (j, &keys);
  }
  return true;
}

/* A derived built-in's fault settings are its base's with the fault keys
 * it sets applied, each of which changes something.
 */
static void
check_derived_faults (const char *name, const char *keys,
                      const struct fm_profile *d, const struct fm_profile *b)
{
  struct fm_faultset want = b->faults;
  char dj[4096], wj[4096], before[4096], val[400];
  struct fm_err err;
  const char *k;
  size_t j;

  for (j = 0; (k = fm_faultset_key (j)); j++) {
    if (!override (keys, k, val, sizeof val))
      continue;
    fm_faultset_json (&want, before, sizeof before);
    ck_assert_int_eq (fm_faultset_set (&want, k, val, &err), 0);
    fm_faultset_json (&want, wj, sizeof wj);
    ck_assert_msg (strcmp (before, wj) != 0, "%s: %s = %s is its base's", name,
                   k, val);
  }
  fm_faultset_json (&d->faults, dj, sizeof dj);
  fm_faultset_json (&want, wj, sizeof wj);
  ck_assert_str_eq (dj, wj);
}

/* A built-in that derives from another equals it with its keys applied:
 * every key it does not set has the base's value, and every key it sets
 * has another (it says only what differs).
 */
START_TEST (test_builtin_inheritance)
{
  char dv[400], bv[400], val[400];
  const char *name, *base, *keys, *k;
  struct fm_profile d, b;
  struct fm_err err;
  size_t i, j, derived = 0;

  for (i = 0; (name = fm_profile_builtin_name (i)); i++) {
    if ((base = fm_profile_builtin_base (i, &keys)) == NULL)
      continue;
    derived++;
    ck_assert_msg (chain_ends (i), "%s: its bases never end", name);
    ck_assert_msg (fm_profile_builtin (name, &d, &err) == 0, "%s", err.msg);
    ck_assert_msg (fm_profile_builtin (base, &b, &err) == 0, "%s", err.msg);
    for (j = 0; (k = fm_profile_key (j)); j++) {
      bool set = strcmp (k, "name") == 0 || override (keys, k, val, sizeof val);

      ck_assert_int_ge (fm_profile_key_value (&d, j, dv, sizeof dv), 0);
      ck_assert_int_ge (fm_profile_key_value (&b, j, bv, sizeof bv), 0);
      if (set)
        ck_assert_msg (strcmp (dv, bv) != 0, "%s: %s = %s is its base's", name,
                       k, dv);
      else
        ck_assert_msg (strcmp (dv, bv) == 0, "%s: %s is %s, base %s has %s",
                       name, k, dv, base, bv);
    }
    ck_assert_uint_eq (d.design_capacity, d.capacity);
    check_derived_faults (name, keys, &d, &b);
  }
  ck_assert_uint_ge (derived, 10);

  /* One by hand: the dual-actuator disk is the 20 TB one with two arms. */
  for (i = 0; strcmp (fm_profile_builtin_name (i), "dual-18t-2022"); i++)
    ;
  ck_assert_str_eq (fm_profile_builtin_base (i, &keys), "cmr-20t-2024");
  ck_assert_int_eq (fm_profile_builtin ("dual-18t-2022", &d, &err), 0);
  ck_assert_int_eq (fm_profile_builtin ("cmr-20t-2024", &b, &err), 0);
  ck_assert_uint_eq (d.actuators, 2);
  ck_assert_uint_eq (d.seek_avg_ns, b.seek_avg_ns);
  ck_assert_uint_eq (d.cache_bytes, b.cache_bytes);
  ck_assert_uint_eq (d.faults.erc_ns, b.faults.erc_ns);
  ck_assert_ptr_null (fm_profile_builtin_base (0, &keys)); /* roadmap-2006 */
  ck_assert_int_eq (fm_profile_key_value (&d, 999, dv, sizeof dv), -1);
}
END_TEST

START_TEST (test_parse_valid)
{
  struct fm_profile p;
  struct fm_err err;

  ck_assert_msg (parse ("name = small\ncapacity = 1G\nrpm = 5400\n"
                        "bandwidth_mbps = 100\nseek_t2t_ms = 1\n"
                        "seek_avg_ms = 12\nseek_full_ms = 20\n",
                        &p, &err) == 0,
                 "%s", err.msg);
  ck_assert_str_eq (p.name, "small");
  ck_assert_uint_eq (p.capacity, 1 << 30);
  ck_assert_uint_eq (p.design_capacity, 1 << 30);
  ck_assert_uint_eq (p.seek_avg_ns, 12000000);
  ck_assert_uint_eq (p.bandwidth, 100000000);
  /* Defaults for keys not given. */
  ck_assert_uint_eq (p.sector, 4096);
  ck_assert_uint_eq (p.zones, 24);
  ck_assert_uint_eq (p.command_ns, 100000);

  /* Comments, blank lines, quotes, CRLF-free whitespace, base. */
  ck_assert_msg (parse ("# comment\n\n  base = roadmap-2006  # trailing\n"
                        "name=x\n"
                        "description = \"has # inside\"\n"
                        "seek_avg_ms = 9.5\n",
                        &p, &err) == 0,
                 "%s", err.msg);
  ck_assert_str_eq (p.description, "has # inside");
  ck_assert_uint_eq (p.seek_avg_ns, 9500000);
  ck_assert_uint_eq (p.capacity, 500000000000ULL); /* from the base */

  /* No trailing newline. */
  ck_assert_msg (parse ("base = ideal\nname = y\ncapacity = 4KiB", &p, &err) ==
                     0,
                 "%s", err.msg);
  ck_assert_uint_eq (p.capacity, 4096);

  /* Fault keys, spelled as the plugin's parameters, over a preset. */
  ck_assert_msg (parse ("base = cmr-8t-2015\nname = worn\n"
                        "faults = consumer\nage = 3y\nber = 1e-14\n"
                        "erc = 30s\n",
                        &p, &err) == 0,
                 "%s", err.msg);
  ck_assert_double_eq (p.faults.ber, 1e-14);
  ck_assert_uint_eq (p.faults.erc_ns, 30000000000ULL);
  ck_assert_double_eq (p.faults.lse, 0.0315);
  ck_assert_double_eq (p.faults.realloc, 0.6);
  /* A built-in keeps its own error recovery and no faults. */
  ck_assert_int_eq (fm_profile_builtin ("roadmap-2006", &p, &err), 0);
  ck_assert_uint_eq (p.faults.erc_ns, 120000000000ULL);
  ck_assert_double_eq (p.faults.ber, 0);
  ck_assert_uint_eq (p.faults.spares, 20000);
}
END_TEST

/* Every way a file can be wrong, and the message it must get. */
START_TEST (test_parse_invalid)
{
  static const struct {
    const char *text;
    const char *message;
  } bad[] = {
      {"name = d\nfoo = 1\n", "t.profile:2: unknown key 'foo'"},
      {"name d\n", "t.profile:1: expected 'key = value', got 'name d'"},
      {"= 3\n", "t.profile:1: missing key before '='"},
      {"name =\n", "t.profile:1: name: empty value"},
      {"name = a\nname = b\n",
       "t.profile:2: name: set twice (first on line 1)"},
      {"name = \"open\n", "t.profile:1: name: unterminated quote"},
      {"name = \"a\" b\n", "t.profile:1: name: text after the closing quote"},
      {"kind = tape\n", "t.profile:1: kind: 'tape' is not hdd, ssd or smr"},
      {"capacity = lots\n", "t.profile:1: capacity: value: 'lots' is not a "
                            "size"},
      {"capacity = 5X\n", "t.profile:1: capacity: value: '5X': unknown suffix"},
      {"rpm = -5\n", "t.profile:1: rpm: value: '-5' is not a non-negative"},
      {"rpm = 7200rpm\n", "t.profile:1: rpm: value: '7200rpm' is not a "
                          "non-negative integer"},
      {"seek_avg_ms = fast\n", "t.profile:1: seek_avg_ms: value: 'fast' is "
                               "not a number"},
      {"seek_avg_ms = nan\n", "is not a number"},
      {"name = a\nbase = roadmap-2006\n",
       "t.profile:2: base: must come before every other key (name is set on "
       "line 1)"},
      {"base = floppy\n", "t.profile:1: base: unknown profile 'floppy'"},
      {"ber = lots\n", "t.profile:1: ber: 'lots' is not a number"},
      {"ber = 1e-14\nber = 1e-15\n", "t.profile:2: ber: set twice"},
      {"ber = 1e-14\nfaults = harsh\n",
       "t.profile:2: faults: a preset must come before the fault keys it "
       "would replace (line 1)"},
      {"faults = awful\n", "t.profile:1: faults: unknown preset 'awful'"},
      {"erc_ms = 7000\n", "t.profile:1: unknown key 'erc_ms'"},
      {"base = ideal\nbase = ideal\n", "t.profile:2: base: set twice"},
      {"name = d\ncapacity = 1G\n", "t.profile: missing required key 'rpm'"},
      {"capacity = 1G\nkind = ssd\n", "missing required key 'name'"},
      {"name = a b\nkind = ssd\ncapacity = 1G\n",
       "t.profile:1: name: use letters, digits"},
      {"name = s\nkind = ssd\ncapacity = 1G\nrpm = 7200\n",
       "t.profile:4: rpm: only a rotating disk (kind = hdd) has this"},
      {"name = s\nkind = ssd\ncapacity = 1000\n",
       "t.profile:3: capacity: 1000 bytes is not a multiple of the 4096-byte "
       "sector"},
      {"name = s\nkind = ssd\ncapacity = 1G\nsector = 1000\n",
       "t.profile:4: sector: must be a power of two"},
      {"name = s\nkind = ssd\ncapacity = 1G\nsector = 256\n",
       "t.profile:4: sector: 256 is out of range [512, 65536]"},
      {"name = x\0y\n", "t.profile:1: NUL byte"},
  };
  struct fm_profile p;
  struct fm_err err;
  char text[2048];
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    size_t len = strlen (bad[i].text);
    if (strstr (bad[i].message, "NUL"))
      len += 3; /* the text has an embedded NUL */
    ck_assert_int_eq (
        fm_profile_parse ("t.profile", bad[i].text, len, &p, &err), -1);
    ck_assert_msg (strstr (err.msg, bad[i].message) != NULL,
                   "case %zu: got \"%s\", want \"%s\"", i, err.msg,
                   bad[i].message);
  }
  /* An over-long line is refused, not truncated. */
  memset (text, 'x', sizeof text - 1);
  text[sizeof text - 1] = '\0';
  ck_assert_int_eq (parse (text, &p, &err), -1);
  ck_assert_ptr_nonnull (strstr (err.msg, "line longer than"));
}
END_TEST

/* A rotating disk's keys out of range. */
START_TEST (test_parse_invalid_hdd)
{
  static const char hdd[] = "name = d\ncapacity = 1G\nrpm = 7200\n"
                            "bandwidth_mbps = 100\nseek_t2t_ms = 1\n"
                            "seek_avg_ms = 8\nseek_full_ms = 16\n";
  static const struct {
    const char *extra;
    const char *message;
  } bad_hdd[] = {
      {"zone_ratio = 9\n", "t.profile:8: zone_ratio: 9 is out of range [1, 4]"},
      {"heads = 0\n", "t.profile:8: heads: 0 is out of range [1, 64]"},
      {"rpm = 100\n", "t.profile:8: rpm: set twice (first on line 3)"},
      {"zones = 5000\n", "t.profile:8: zones: 5000 is out of range"},
      {"seek_settle_ms = -1\n",
       "t.profile:8: seek_settle_ms: -1 is out of range [0, 100]"},
      {"track_switch_ms = 9\n",
       "t.profile:8: track_switch_ms: must be shorter than one revolution"},
  };
  struct fm_profile p;
  struct fm_err err;
  char text[2048];
  size_t i;

  for (i = 0; i < sizeof bad_hdd / sizeof bad_hdd[0]; i++) {
    snprintf (text, sizeof text, "%s%s", hdd, bad_hdd[i].extra);
    ck_assert_int_eq (parse (text, &p, &err), -1);
    ck_assert_msg (strstr (err.msg, bad_hdd[i].message) != NULL,
                   "hdd case %zu: got \"%s\", want \"%s\"", i, err.msg,
                   bad_hdd[i].message);
  }
}
END_TEST

/* Seek times that no seek curve can have. */
START_TEST (test_parse_invalid_seek)
{
  static const struct {
    const char *seeks;
    const char *message;
  } bad_seek[] = {
      {"seek_t2t_ms = 1\nseek_avg_ms = 2\nseek_full_ms = 20\n",
       "t.profile:6: seek_avg_ms: average seek 2.000 ms is below"},
      {"seek_t2t_ms = 1\nseek_avg_ms = 19\nseek_full_ms = 20\n",
       "t.profile:6: seek_avg_ms: average seek 19.000 ms is above"},
      {"seek_t2t_ms = 5\nseek_avg_ms = 4\nseek_full_ms = 20\n",
       "t.profile:6: seek_avg_ms: below the track-to-track seek"},
      {"seek_t2t_ms = 1\nseek_avg_ms = 8\nseek_full_ms = 7\n",
       "t.profile:7: seek_full_ms: below the average seek"},
      {"seek_t2t_ms = 0\nseek_avg_ms = 8\nseek_full_ms = 16\n",
       "t.profile:5: seek_t2t_ms: 0 is out of range"},
  };
  struct fm_profile p;
  struct fm_err err;
  char text[2048];
  size_t i;

  for (i = 0; i < sizeof bad_seek / sizeof bad_seek[0]; i++) {
    snprintf (text, sizeof text,
              "name = d\ncapacity = 1G\nrpm = 7200\nbandwidth_mbps = 100\n%s",
              bad_seek[i].seeks);
    ck_assert_int_eq (parse (text, &p, &err), -1);
    ck_assert_msg (strstr (err.msg, bad_seek[i].message) != NULL,
                   "seek case %zu: got \"%s\", want \"%s\"", i, err.msg,
                   bad_seek[i].message);
  }
}
END_TEST

START_TEST (test_units)
{
  static const struct {
    const char *s;
    uint64_t v;
  } good[] = {
      {"0", 0},
      {"4096", 4096},
      {"1K", 1024},
      {"1KiB", 1024},
      {"1kb", 1000},
      {"1G", 1073741824},
      {"500GB", 500000000000ULL},
      {"8TB", 8000000000000ULL},
      {"1.5T", 1649267441664ULL},
      {"24TB", 24000000000000ULL},
      {"2s", 1024},
      {"1 MiB", 1048576},
  };
  static const char *const badsizes[] = {
      "", "x", "-1", "1Q", "0x10", "inf", "1.5", "20000P", "1e3", " 1",
  };
  struct fm_err err;
  uint64_t v;
  double d;
  size_t i;

  for (i = 0; i < sizeof good / sizeof good[0]; i++) {
    ck_assert_msg (fm_parse_size ("size", good[i].s, &v, &err) == 0, "%s: %s",
                   good[i].s, err.msg);
    ck_assert_uint_eq (v, good[i].v);
  }
  for (i = 0; i < sizeof badsizes / sizeof badsizes[0]; i++) {
    ck_assert_msg (fm_parse_size ("size", badsizes[i], &v, &err) == -1,
                   "'%s' was accepted", badsizes[i]);
    ck_assert_msg (strncmp (err.msg, "size: ", 6) == 0, "%s", err.msg);
  }
  ck_assert_int_eq (fm_parse_double ("ber", "1e-14", 0, 1, &d, &err), 0);
  ck_assert_double_eq (d, 1e-14);
  ck_assert_int_eq (fm_parse_double ("ber", "2", 0, 1, &d, &err), -1);
  ck_assert_str_eq (err.msg, "ber: 2 is out of range [0, 1]");
  ck_assert_int_eq (
      fm_parse_uint ("seed", "18446744073709551615", 0, UINT64_MAX, &v, &err),
      0);
  ck_assert_uint_eq (v, UINT64_MAX);
  ck_assert_int_eq (
      fm_parse_uint ("seed", "18446744073709551616", 0, UINT64_MAX, &v, &err),
      -1);
  ck_assert_int_eq (fm_parse_uint ("seed", "+1", 0, 9, &v, &err), -1);
}
END_TEST

START_TEST (test_resize)
{
  struct fm_profile p;
  struct fm_err err;

  ck_assert_int_eq (fm_profile_builtin ("cmr-20t-2024", &p, &err), 0);
  ck_assert_int_eq (fm_profile_resize (&p, 1 << 30, &err), 0);
  ck_assert_uint_eq (p.capacity, 1 << 30);
  ck_assert_uint_eq (p.design_capacity, 20000000000000ULL);
  ck_assert_int_eq (fm_profile_validate (&p, &err), 0);
  ck_assert_int_eq (fm_profile_resize (&p, 24000000000000ULL, &err), 0);
  ck_assert_int_eq (fm_profile_resize (&p, 4095, &err), -1);
  ck_assert_str_eq (err.msg, "size: 4095 bytes is not a multiple of profile "
                             "cmr-20t-2024's 4096-byte sector");
}
END_TEST

/* The example files shipped beside the tests parse and validate. */
START_TEST (test_example_files)
{
  static const char *const files[] = {
      "my-nas-disk.profile",
      "roadmap-2013-smaller-cache.profile",
      "usb-flash.profile",
  };
  static const char *const names[] = {"nas-12t", "roadmap-2013-16m",
                                      "usb-flash"};
  struct fm_profile p;
  struct fm_err err;
  char path[4096], text[8192];
  size_t i, len;

  for (i = 0; i < 3; i++) {
    FILE *fp;

    snprintf (path, sizeof path, "%s/%s", PROFILES_DIR, files[i]);
    fp = fopen (path, "r");
    ck_assert_ptr_nonnull (fp);
    len = fread (text, 1, sizeof text, fp);
    fclose (fp);
    ck_assert_msg (fm_profile_parse (path, text, len, &p, &err) == 0, "%s",
                   err.msg);
    ck_assert_str_eq (p.name, names[i]);
  }
  ck_assert_uint_eq (p.write_bandwidth, 40000000);
}
END_TEST

/* PROFILES.md documents every key the parser accepts, and no key it
 * rejects slips into its key table.
 */
START_TEST (test_documented)
{
  char path[4096], *doc, row[128];
  FILE *fp;
  size_t i, len;

  snprintf (path, sizeof path, "%s/../../PROFILES.md", PROFILES_DIR);
  fp = fopen (path, "r");
  ck_assert_ptr_nonnull (fp);
  doc = calloc (1, 65536);
  len = fread (doc, 1, 65535, fp);
  fclose (fp);
  ck_assert_uint_gt (len, 0);
  for (i = 0; fm_profile_key (i); i++) {
    snprintf (row, sizeof row, "| `%s` |", fm_profile_key (i));
    ck_assert_msg (strstr (doc, row) != NULL,
                   "PROFILES.md has no row for key '%s'", fm_profile_key (i));
  }
  ck_assert_uint_ge (i, 20);
  for (i = 0; fm_faultset_key (i); i++) {
    snprintf (row, sizeof row, "| `%s` |", fm_faultset_key (i));
    ck_assert_msg (strstr (doc, row) != NULL,
                   "PROFILES.md has no row for fault key '%s'",
                   fm_faultset_key (i));
  }
  free (doc);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"builtins", test_builtins},
      {"builtin_inheritance", test_builtin_inheritance},
      {"parse_valid", test_parse_valid},
      {"parse_invalid", test_parse_invalid},
      {"parse_invalid_hdd", test_parse_invalid_hdd},
      {"parse_invalid_seek", test_parse_invalid_seek},
      {"units", test_units},
      {"resize", test_resize},
      {"example_files", test_example_files},
      {"documented", test_documented},
  };

  return fd_check_main ("profile", cases, sizeof cases / sizeof cases[0]);
}
