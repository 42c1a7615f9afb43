enum OneTimeCode {}
