/* futuredisk — faultmodels: which drive model timed a trial.
 *
 * Trials timed by different models are not comparable: `futuredisk
 * compare` compares fsck times only between nights of the same model
 * version and names both versions when they differ.  The harness records
 * the version in every trial (the record's `model_version`, the trials
 * table's column; harness/SCHEMA.md).
 */
#ifndef FAULTMODELS_VERSION_H
#define FAULTMODELS_VERSION_H

/* The drive model's version, a positive integer.  Bump it whenever the
 * model's timing changes: anything that moves how long a request takes
 * or which one the drive serves next (seek curve, mechanics, queue,
 * caches, destage, a built-in profile's numbers), so that a night timed
 * by the new model is not taken for a regression of the old.  Records
 * made before the version existed count as 1 ("1 or unknown").
 */
#define FM_MODEL_VERSION 2

#endif
