/** The named rules of the `rateLimit` namespace; code refers to them by these names, config sets their values. */
export const LOGIN_IP_RULE = 'login-ip';
export const LOGIN_USER_RULE = 'login-user';
export const SMS_MINUTE_RULE = 'sms-minute';
export const SMS_HOUR_RULE = 'sms-hour';
export const SMS_DAY_RULE = 'sms-day';
export const API_KEY_RULE = 'api-key';
/** Per tenant, on the `reports.generate` message of the app's microservice (TCP). */
export const REPORTS_RULE = 'reports';
/** The SMS provider's own limit on what this app sends it, waited on (not refused) before each send. */
export const SMS_PROVIDER_RULE = 'sms-provider';

/**
 * What the search backend takes from this app, every instance and every client together: one hot key, which instances
 * spend from local budgets (`localBudget`) instead of asking Redis on every search.
 */
export const SEARCH_RULE = 'search';

/** All three must admit a code, and a refused request is charged to none of them. */
export const SMS_RULES = [SMS_MINUTE_RULE, SMS_HOUR_RULE, SMS_DAY_RULE] as const;
