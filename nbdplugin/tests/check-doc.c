/* futuredisk — nbdplugin: the man page documents every fault key (with
 * its =item) and every fault kind, straight from the tables the plugin
 * parses with, so a new key cannot ship undocumented.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "faultmodels/faults.h"
#include "faultmodels/faultset.h"

static char *
slurp (const char *path)
{
  FILE *fp = fopen (path, "r");
  char *text = calloc (1, 1 << 20);

  ck_assert_msg (fp != NULL, "%s", path);
  fread (text, 1, (1 << 20) - 1, fp);
  fclose (fp);
  return text;
}

START_TEST (test_fault_keys)
{
  char *pod = slurp (POD_PATH), *help = slurp (PLUGIN_SOURCE), item[96];
  size_t i;

  for (i = 0; fm_faultset_key (i); i++) {
    const char *k = fm_faultset_key (i);

    snprintf (item, sizeof item, "=item B<%s=>", k);
    ck_assert_msg (strstr (pod, item), "the man page has no %s", item);
    /* The --help text names it too. */
    snprintf (item, sizeof item, "%s=", k);
    ck_assert_msg (
        strstr (strstr (help, "#define futuredisk_config_help"), item),
        "--help does not mention %s", item);
  }
  ck_assert_ptr_nonnull (strstr (pod, "=item B<faults=>PRESET"));
  for (i = 0; fm_faultset_preset_name (i); i++)
    ck_assert_msg (strstr (pod, fm_faultset_preset_name (i)),
                   "preset %s undocumented", fm_faultset_preset_name (i));
  free (pod);
  free (help);
}
END_TEST

START_TEST (test_fault_kinds)
{
  char *pod = slurp (POD_PATH), *faults, item[64];
  int k;

  faults = strstr (pod, "=head1 FAULTS");
  ck_assert_ptr_nonnull (faults);
  for (k = 0; k < FM_FAULT_NKINDS; k++) {
    snprintf (item, sizeof item, "C<%s>", fm_fault_name (k));
    ck_assert_msg (strstr (faults, item), "FAULTS has no %s", item);
  }
  free (pod);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"fault_keys", test_fault_keys},
      {"fault_kinds", test_fault_kinds},
  };

  return fd_check_main ("doc", cases, sizeof cases / sizeof cases[0]);
}
