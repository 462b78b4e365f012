import { Module } from '@nestjs/common';
import { ReportsController } from './reports.controller.js';

/** Message handlers the app serves to other services over Nest's TCP transport (main.ts connects it). */
@Module({ controllers: [ReportsController] })
export class ReportsModule {}
